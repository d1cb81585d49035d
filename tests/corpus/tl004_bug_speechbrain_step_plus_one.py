"""A SpeechBrain recipe overrides `fit_batch` and steps one batch too early: `self.step` is already 1 on the first batch."""
import speechbrain as sb


class ASR(sb.Brain):
    def compute_forward(self, batch, stage):
        return self.modules.model(batch.sig)

    def compute_objectives(self, predictions, batch, stage):
        return sb.nnet.losses.nll_loss(predictions, batch.tokens)

    def fit_batch(self, batch):
        should_step = (self.step + 1) % self.grad_accumulation_factor == 0  # expect: TL004
        outputs = self.compute_forward(batch, sb.Stage.TRAIN)
        loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
        (loss / self.grad_accumulation_factor).backward()
        if should_step:
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()
