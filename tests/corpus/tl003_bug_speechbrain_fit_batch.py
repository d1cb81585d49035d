"""A SpeechBrain recipe overrides `fit_batch` and backpropagates the undivided loss."""
import speechbrain as sb


class ASR(sb.Brain):
    def compute_forward(self, batch, stage):
        return self.modules.model(batch.sig)

    def compute_objectives(self, predictions, batch, stage):
        return sb.nnet.losses.nll_loss(predictions, batch.tokens)

    def fit_batch(self, batch):
        should_step = self.step % self.grad_accumulation_factor == 0
        outputs = self.compute_forward(batch, sb.Stage.TRAIN)
        loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
        loss.backward()  # expect: TL003
        if should_step:
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()
