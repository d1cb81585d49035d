"""A gradient-clipping object of the script called on every micro-batch (the shape of a BERT SQuAD baseline)."""
import torch


class GradientClipper:
    """Clips the gradient norm of an iterable of parameters."""

    def __init__(self, max_grad_norm):
        self.max_norm = max_grad_norm

    def step(self, parameters):
        grads = [p.grad for p in parameters if p.grad is not None]
        total_norm = torch.norm(torch.stack([torch.norm(g) for g in grads]))
        clip_coef = self.max_norm / (total_norm + 1e-6)
        if clip_coef < 1:
            for g in grads:
                g.mul_(clip_coef)


def train(args, model, optimizer, train_dataloader):
    grad_clipper = GradientClipper(max_grad_norm=1.0)
    model.train()
    for epoch in range(int(args.num_train_epochs)):
        for step, batch in enumerate(train_dataloader):
            input_ids, input_mask, segment_ids, start_positions, end_positions = batch
            loss = model(input_ids, segment_ids, input_mask, start_positions, end_positions)
            loss = loss / args.gradient_accumulation_steps
            loss.backward()
            grad_clipper.step(list(model.parameters()))  # expect: TL014
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(train_dataloader):
                optimizer.step()
                optimizer.zero_grad()
