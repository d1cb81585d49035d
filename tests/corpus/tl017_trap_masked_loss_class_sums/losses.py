"""A spectrogram loss summed over the frames inside each utterance's length, then divided by the batch size:
a per-utterance total, not a mean over the frames."""
import torch
import torch.nn as nn


class MaskedL1Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.L1Loss(reduction="sum")

    def forward(self, outputs, targets, lengths):
        positions = torch.arange(targets.size(1), device=targets.device)
        masks = (positions[None, :] < lengths[:, None]).unsqueeze(-1)
        return self.l1(outputs.masked_select(masks), targets.masked_select(masks)) / targets.size(0)
