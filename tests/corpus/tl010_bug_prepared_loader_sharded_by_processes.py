"""512 rows, one a micro-batch, windows of 4: the loader itself gives 512 micro-batches, a multiple of 4, but
the loop walks what `accelerator.prepare` returns, and that is sharded by the number of processes the run is
launched with (`accelerate launch --num_processes 3`: 171 micro-batches each, 171 % 4 == 3): the last
window's gradients may never be applied, and the code does not say how many processes there are."""
import torch
from torch.utils.data import DataLoader, TensorDataset
from accelerate import Accelerator

ds = TensorDataset(torch.randn(512, 4), torch.randn(512))
dataloader = DataLoader(ds, batch_size=1)
accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer, dataloader = accelerator.prepare(model, opt, dataloader)
for step, (x, y) in enumerate(dataloader, start=1):
    loss = ((model(x) - y) ** 2).mean() / 4
    accelerator.backward(loss)
    if step % 4 == 0:  # expect: TL010
        optimizer.step()
        optimizer.zero_grad()
