"""A SpeechBrain recipe overrides `fit_batch` and zeroes the gradients on every batch."""
import speechbrain as sb


class ASR(sb.Brain):
    def compute_forward(self, batch, stage):
        return self.modules.model(batch.sig)

    def compute_objectives(self, predictions, batch, stage):
        return sb.nnet.losses.nll_loss(predictions, batch.tokens)

    def fit_batch(self, batch):
        should_step = self.step % self.grad_accumulation_factor == 0
        self.optimizer.zero_grad()  # expect: TL007
        outputs = self.compute_forward(batch, sb.Stage.TRAIN)
        loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
        (loss / self.grad_accumulation_factor).backward()
        if should_step:
            self.optimizer.step()
        return loss.detach()
