"""Knowledge distillation: the student's forward pass ended up in the teacher's no_grad block."""
import torch
import torch.nn.functional as F


def distill(student, teacher, loader, epochs=10, T=4.0, alpha=0.9):
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    teacher.eval()
    for epoch in range(epochs):
        student.train()
        for images, labels in loader:
            with torch.no_grad():
                teacher_logits = teacher(images)
                student_logits = student(images)
            soft = F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                            reduction="batchmean") * (T * T)
            hard = F.cross_entropy(student_logits, labels)
            loss = alpha * soft + (1 - alpha) * hard
            optimizer.zero_grad()
            loss.backward()  # expect: TL011
            optimizer.step()
