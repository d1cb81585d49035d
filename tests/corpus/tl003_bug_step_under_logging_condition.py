"""OpenPrompt's tutorial loop: the optimizer step sits in the logging branch, nested in the accumulation one, and
`glb_step` counts the accumulation windows: the step runs once every `gradient_accumulation_steps *
pbar_update_freq` micro-batches. The mean losses of that whole window are summed undivided, and the clip runs on
each of its `gradient_accumulation_steps`-long parts."""
import torch
from tqdm import tqdm

from data import model, optimizer, scheduler, train_dataloader

gradient_accumulation_steps = 4
pbar_update_freq = 10
tot_loss, log_loss = 0.0, 0.0
actual_step, glb_step = 0, 0
model.train()
pbar = tqdm(total=10000)
for epoch in range(100):
    for step, inputs in enumerate(train_dataloader):
        loss = model(inputs)
        loss.backward()  # expect: TL003
        tot_loss += loss.item()
        actual_step += 1
        if actual_step % gradient_accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL014
            glb_step += 1
            if glb_step % pbar_update_freq == 0:
                pbar.update(pbar_update_freq)
                pbar.set_postfix({"loss": (tot_loss - log_loss) / pbar_update_freq})
                log_loss = tot_loss
                if optimizer is not None:
                    optimizer.step()
                    optimizer.zero_grad()
                if scheduler is not None:
                    scheduler.step()
