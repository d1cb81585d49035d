"""Lightning manual optimisation that resets before each backward."""
import lightning as L
import torch


class TBPTTModel(L.LightningModule):
    def __init__(self, net, chunk_len=50):
        super().__init__()
        self.net = net
        self.chunk_len = chunk_len
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        for xs, ys in zip(x.split(self.chunk_len, dim=1), y.split(self.chunk_len, dim=1)):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(self.net(xs), ys)
            self.manual_backward(loss)
            opt.step()
            self.log("train_loss", loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
