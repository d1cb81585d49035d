"""Distillation: only the frozen teacher's gradients are cleared; the student's optimizer keeps the running sum."""
import torch
import torch.nn.functional as F


class Distiller:
    def __init__(self, student, teacher, accum):
        self.student = student
        self.teacher = teacher
        self.accum = accum
        self.optimizer = torch.optim.SGD(self.student.parameters(), lr=0.01)

    def fit(self, batches, steps):
        for step in range(steps):
            self.teacher.zero_grad(set_to_none=True)
            for micro in range(self.accum):
                x = next(batches)
                with torch.no_grad():
                    target = self.teacher(x).softmax(-1)
                loss = F.kl_div(self.student(x).log_softmax(-1), target, reduction="batchmean") / self.accum
                loss.backward()
            self.optimizer.step()  # expect: TL002
