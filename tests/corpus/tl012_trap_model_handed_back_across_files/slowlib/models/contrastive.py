"""The contrastive forward pass: sequential backwards for memory, or one forward; the model is handed back."""


def contrastive_forward(model, cfg, inputs, scaler):
    if cfg.sequential:
        perform_backward = False
        partial_loss = 0.0
        for k, vid in enumerate(inputs):
            logits, loss_k = model([vid], k)
            scaler.scale(loss_k).backward()
            partial_loss += loss_k.detach()
        preds = logits
    else:
        perform_backward = True
        preds, partial_loss = model(inputs, None)
    return model, preds, partial_loss, perform_backward
