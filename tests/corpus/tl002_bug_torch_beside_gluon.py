"""Porting a Gluon model to PyTorch, both loops in one file: the Gluon loop is right, the PyTorch one never resets."""
import mxnet as mx
import torch
from mxnet import autograd, gluon


def train_gluon(net, train_data, epochs, batch_size):
    optimizer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(epochs):
        for data, label in train_data:
            data = data.as_in_context(mx.cpu())
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            optimizer.step(batch_size)


def train_torch(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for data, label in loader:
            loss = criterion(model(data), label)
            loss.backward()
            optimizer.step()  # expect: TL002


def compare(gluon_net, torch_model, gluon_data, torch_loader, epochs=3, batch_size=64):
    train_gluon(gluon_net, gluon_data, epochs, batch_size)
    train_torch(torch_model, torch_loader, epochs)
