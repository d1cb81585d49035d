"""A Brain that keeps its own count in `self.step` (restored from a checkpoint): where it starts is not
SpeechBrain's to say, so `(self.step + 1) % N` is not judged."""
import speechbrain as sb


class ASR(sb.Brain):
    def on_fit_start(self):
        super().on_fit_start()
        self.step = self.hparams.resume_step

    def compute_forward(self, batch, stage):
        return self.modules.model(batch.sig)

    def compute_objectives(self, predictions, batch, stage):
        return sb.nnet.losses.nll_loss(predictions, batch.tokens)

    def fit_batch(self, batch):
        outputs = self.compute_forward(batch, sb.Stage.TRAIN)
        loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
        (loss / self.grad_accumulation_factor).backward()
        if (self.step + 1) % self.grad_accumulation_factor == 0:
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()
