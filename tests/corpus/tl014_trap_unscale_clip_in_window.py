"""AMP trainer with accumulation: unscale, clip, step and update once per window, in the step's branch."""
import torch
from torch.nn.utils import clip_grad_norm_


class Trainer:
    def __init__(self, model, loader, args):
        self.model = model
        self.loader = loader
        self.args = args
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
        self.scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)

    def train_epoch(self, epoch):
        self.model.train()
        accum = self.args.gradient_accumulation_steps
        for step, batch in enumerate(self.loader):
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.args.fp16):
                loss = self.model(**batch).loss / accum
            self.scaler.scale(loss).backward()
            if (step + 1) % accum == 0 or step + 1 == len(self.loader):
                self.scaler.unscale_(self.optimizer)
                grad_norm = clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad(set_to_none=True)
                if step % self.args.log_every == 0:
                    print(f"epoch {epoch} step {step} loss {loss.item() * accum:.4f} grad_norm {grad_norm:.3f}")
