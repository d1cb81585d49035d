"""MindSpore through MSAdapter's PyTorch-like API: `import msadapter.pytorch as torch` is MindSpore, not PyTorch."""
import mindspore as ms
import msadapter.pytorch as torch
import msadapter.pytorch.nn as nn


def train(model, loader, epochs=3, lr=1e-3):
    criterion = nn.CrossEntropyLoss()
    optimizer = ms.nn.Adam(model.trainable_params(), learning_rate=lr)

    def forward_fn(data, label):
        return criterion(model(data), label)

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
    for epoch in range(epochs):
        for step, (data, label) in enumerate(loader):
            loss, grads = grad_fn(data, label)
            optimizer(grads)
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.asnumpy():.4f}")
