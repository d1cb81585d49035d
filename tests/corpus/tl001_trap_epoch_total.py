"""An epoch total kept for logging next to the per-step loss."""
from tqdm import tqdm


def train_epoch(model, loader, optimizer, scheduler):
    model.train()
    epoch_loss = 0.0
    for step, batch in enumerate(tqdm(loader, desc="train")):
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        epoch_loss += loss.detach().float()
    return epoch_loss / (step + 1)
