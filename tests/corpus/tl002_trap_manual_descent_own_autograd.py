"""A scalar autograd of the file's own (micrograd's `Value`), whose `backward()` sets each gradient rather than
adding to it: the file imports no torch, so a step by hand without a reset says nothing about PyTorch."""


class Value:
    def __init__(self, data):
        self.data = data
        self.grad = 0.0

    def __mul__(self, other):
        return Value(self.data * other.data)

    def backward(self):
        self.grad = 1.0


w = Value(1.0)
for step in range(100):
    loss = w * w
    loss.backward()
    w.data -= 0.05 * w.grad
