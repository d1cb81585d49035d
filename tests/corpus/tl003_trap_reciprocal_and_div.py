"""Two spellings of the division: `* (1.0 / n)` and `.div(n)`."""
import torch
import torch.nn.functional as F


def train_student(student, teacher, loader, optimizer, accum, temperature=2.0):
    teacher.eval()
    for i, (x, y) in enumerate(loader):
        with torch.no_grad():
            soft = F.softmax(teacher(x) / temperature, dim=-1)
        logits = student(x)
        distill = F.kl_div(F.log_softmax(logits / temperature, dim=-1), soft, reduction="batchmean")
        loss = (distill + F.cross_entropy(logits, y)) * (1.0 / accum)
        loss.backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_regressor(model, loader, optimizer, cfg):
    for i, (x, y) in enumerate(loader):
        loss = F.huber_loss(model(x), y).div(cfg.train.accum)
        loss.backward()
        if (i + 1) % cfg.train.accum == 0:
            optimizer.step()
            optimizer.zero_grad()
    # flush the last, incomplete window
    optimizer.step()
    optimizer.zero_grad()
