"""A single-pass script whose reset helper is defined, not called, before the loop: nothing clears the last
partial window's gradients there, and the loop is the whole run."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def clear_gradients(opt):
    opt.zero_grad(set_to_none=True)


model = torch.nn.Linear(8, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = torch.nn.CrossEntropyLoss()
grad_accum = 6
loader = DataLoader(TensorDataset(torch.randn(100, 8), torch.randint(0, 3, (100,))), batch_size=10)

for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / grad_accum
    loss.backward()
    if (i + 1) % grad_accum == 0:  # expect: TL010
        optimizer.step()
        clear_gradients(optimizer)
torch.save(model.state_dict(), "model.pt")
