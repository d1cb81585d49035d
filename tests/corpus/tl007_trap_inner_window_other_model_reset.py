"""A frozen teacher's gradients are cleared on every micro-batch; the student's accumulate over the window."""
import torch
import torch.nn.functional as F


def distill(student, teacher, loader, steps, accum):
    optimizer = torch.optim.AdamW(student.parameters(), lr=1e-4)
    batches = iter(loader)
    for step in range(steps):
        for _ in range(accum):
            teacher.zero_grad()
            x = next(batches)
            with torch.no_grad():
                target = teacher(x).softmax(-1)
            loss = F.kl_div(student(x).log_softmax(-1), target, reduction="batchmean") / accum
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
