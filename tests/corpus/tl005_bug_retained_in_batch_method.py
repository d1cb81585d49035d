"""A graph-similarity trainer: `process_batch` runs the model on each pair of the batch it is handed, sums
the losses and backpropagates once, keeping the graph. The batch is the loop's own (pair descriptions, no
graph), so nothing goes through that graph again: it stays in memory until `process_batch` returns."""
import torch


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args

    def process_batch(self, batch):
        self.optimizer.zero_grad()
        losses = 0
        for pair in batch:
            data = self.to_torch(pair)
            prediction = self.model(data)
            losses = losses + torch.nn.functional.mse_loss(data["target"], prediction)
        losses.backward(retain_graph=True)  # expect: TL005
        self.optimizer.step()
        return losses.item()

    def fit(self):
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.args.lr)
        for epoch in range(self.args.epochs):
            batches = self.create_batches()
            for index, batch in enumerate(batches):
                loss = self.process_batch(batch)
                print(epoch, index, loss)
