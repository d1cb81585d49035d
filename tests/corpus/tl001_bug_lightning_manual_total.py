"""Lightning manual optimisation: the sub-batch losses are summed and backpropagated each time."""
import lightning as L
import torch


class SubBatchModel(L.LightningModule):
    def __init__(self, net, sub_batches=4):
        super().__init__()
        self.net = net
        self.sub_batches = sub_batches
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        x, y = batch
        total = torch.zeros((), device=self.device)
        for xs, ys in zip(x.chunk(self.sub_batches), y.chunk(self.sub_batches)):
            total = total + torch.nn.functional.cross_entropy(self.net(xs), ys) / self.sub_batches
            self.manual_backward(total)  # expect: TL001
        opt.step()
        self.log("train_loss", total)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
