"""Step-budgeted AMP loop with a micro-batch counter; the reset was never moved into the window."""
import torch


class Trainer:
    def __init__(self, model, loader, cfg):
        self.model = model
        self.loader = loader
        self.cfg = cfg
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.scaler = torch.amp.GradScaler("cuda")

    def train(self):
        data = iter(self.loader)
        micro = 0
        updates = 0
        while updates < self.cfg.max_updates:
            batch = next(data)
            self.optimizer.zero_grad(set_to_none=True)  # expect: TL007
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.model(**batch).loss / self.cfg.accum
            self.scaler.scale(loss).backward()
            micro += 1
            if micro == self.cfg.accum:
                self.scaler.step(self.optimizer)
                self.scaler.update()
                updates += 1
                micro = 0
