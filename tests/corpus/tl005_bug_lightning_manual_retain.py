"""Lightning manual optimisation over sequence chunks, each chunk's graph retained."""
import lightning as L
import torch.nn.functional as F


class ChunkedSeqModel(L.LightningModule):
    def __init__(self, net, chunk_len=64):
        super().__init__()
        self.net = net
        self.chunk_len = chunk_len
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        for xs, ys in zip(x.split(self.chunk_len, dim=1), y.split(self.chunk_len, dim=1)):
            loss = F.mse_loss(self.net(xs), ys)
            opt.zero_grad()
            self.manual_backward(loss, retain_graph=True)  # expect: TL005
            opt.step()
            self.log("train_loss", loss)
