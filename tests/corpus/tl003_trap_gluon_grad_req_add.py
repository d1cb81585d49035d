"""MXNet Gluon gradient accumulation: grad_req="add", the Trainer scales by the samples it is told, zero_grad on the parameters."""
import mxnet as mx
from mxnet import autograd, gluon


def train(net, train_data, epochs, accumulate=4):
    ctx = mx.cpu()
    net.collect_params().setattr("grad_req", "add")
    optimizer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 1e-3})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(epochs):
        for i, (data, label) in enumerate(train_data):
            data = data.as_in_context(ctx)
            label = label.as_in_context(ctx)
            with autograd.record():
                output = net(data)
                loss = loss_fn(output, label)
            loss.backward()
            if (i + 1) % accumulate == 0:
                optimizer.step(accumulate * data.shape[0])
                net.collect_params().zero_grad()
