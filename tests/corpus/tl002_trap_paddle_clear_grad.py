"""Image classifier trained with PaddlePaddle: the optimizer's clear_grad() resets the gradients."""
import paddle
import paddle.nn.functional as F
from paddle.vision.datasets import MNIST
from paddle.vision.transforms import ToTensor


def train(epochs=5, batch_size=64):
    model = paddle.vision.models.LeNet(num_classes=10)
    train_loader = paddle.io.DataLoader(MNIST(mode="train", transform=ToTensor()), batch_size=batch_size, shuffle=True)
    optimizer = paddle.optimizer.Adam(learning_rate=0.001, parameters=model.parameters())
    model.train()
    for epoch in range(epochs):
        for batch_id, (x_data, y_data) in enumerate(train_loader()):
            predicts = model(x_data)
            loss = F.cross_entropy(predicts, y_data)
            acc = paddle.metric.accuracy(predicts, y_data)
            loss.backward()
            if batch_id % 300 == 0:
                print(f"epoch: {epoch}, batch_id: {batch_id}, loss is: {loss.numpy()}, acc is: {acc.numpy()}")
            optimizer.step()
            optimizer.clear_grad()
