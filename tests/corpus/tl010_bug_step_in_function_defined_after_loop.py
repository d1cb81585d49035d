"""A notebook exported as a script: the accumulation loop runs at the top level, and the cell after it only
defines the step a later stage calls (a definition runs nothing where it stands: no flush of the last window)."""
import torch
from torch.utils.data import DataLoader, TensorDataset

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
accum_steps = 4
loader = DataLoader(TensorDataset(torch.randn(230, 16), torch.randn(230, 1)), batch_size=16, shuffle=True)

for it, (x, y) in enumerate(loader):
    loss = torch.nn.functional.mse_loss(model(x), y) / accum_steps
    loss.backward()
    if (it + 1) % accum_steps == 0:  # expect: TL010
        optimizer.step()
        optimizer.zero_grad()


# %% the fine-tuning stage's update, for later
def finetune_update(batch):
    x, y = batch
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
