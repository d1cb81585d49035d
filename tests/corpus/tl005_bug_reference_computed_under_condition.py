"""Speech synthesis fine-tuning: the reference style is computed under `torch.no_grad()`, and only from some
epoch on (`ref` keeps the previous iteration's value otherwise, which has no graph either). The
discriminator's backward is the last one through its graph, but keeps it."""
import torch


def train(model, slm_discriminator, loader, optimizer, d_optimizer, epochs, diff_epoch, multispeaker):
    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            texts, mels, ref_mels = [b.cuda() for b in batch]
            with torch.no_grad():
                if multispeaker and epoch >= diff_epoch:
                    ref = model.style_encoder(ref_mels)
            optimizer.zero_grad()
            y_pred = model.decoder(texts, ref if multispeaker else None)
            loss = torch.nn.functional.l1_loss(y_pred, mels)
            loss.backward()
            optimizer.step()
            d_optimizer.zero_grad()
            d_loss = slm_discriminator(y_pred.detach(), mels, ref if multispeaker else None).mean()
            d_loss.backward(retain_graph=True)  # expect: TL005
            d_optimizer.step()
