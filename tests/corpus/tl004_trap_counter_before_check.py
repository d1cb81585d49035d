"""The counter is incremented before the check, so it is 1 on the first micro-batch."""


class Trainer:
    def __init__(self, model, optimizer, scheduler, accum):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.accum = accum
        self.global_step = 0

    def train_epoch(self, loader):
        micro_step = 0
        for batch in loader:
            loss = self.model(**batch).loss / self.accum
            loss.backward()
            micro_step += 1
            if micro_step % self.accum == 0:
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad()
                self.global_step += 1
        if micro_step % self.accum != 0:  # the last, partial window
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
