"""SpeechBrain's own `fit_batch`, written out: `self.step` is already 1 on an epoch's first batch, so
`self.step % N == 0` steps at each window's end; the loss is divided and the DDP sync skipped in between."""
import speechbrain as sb


class ASR(sb.Brain):
    def compute_forward(self, batch, stage):
        return self.modules.model(batch.sig)

    def compute_objectives(self, predictions, batch, stage):
        return sb.nnet.losses.nll_loss(predictions, batch.tokens)

    def fit_batch(self, batch):
        should_step = self.step % self.grad_accumulation_factor == 0
        with self.no_sync(not should_step):
            outputs = self.compute_forward(batch, sb.Stage.TRAIN)
            loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
            scaled_loss = self.scaler.scale(loss / self.grad_accumulation_factor)
            scaled_loss.backward()
        if should_step:
            self.scaler.unscale_(self.optimizer)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
        return loss.detach().cpu()
