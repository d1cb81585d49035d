"""A FastSpeech-style acoustic model: its `forward` keeps only the frames and phonemes inside each
utterance's length (`masked_select` with masks made from the lengths) and scores them with criteria it
stores in `__init__` (`self.criterion = L1Loss()`): a mean over as many frames as the micro-batch holds,
which varies with the utterances' lengths. The loop divides it by the accumulation count."""
import torch
import torch.nn as nn


class FeedForwardTransformer(nn.Module):
    def __init__(self, idim, odim, adim):
        super().__init__()
        self.encoder = nn.Embedding(idim, adim)
        self.decoder = nn.Linear(adim, odim)
        self.duration_predictor = nn.Linear(adim, 1)
        self.criterion = torch.nn.L1Loss(reduction="mean")
        self.duration_criterion = torch.nn.MSELoss()

    def forward(self, xs, ilens, ys, olens, ds):
        hs = self.encoder(xs)
        d_outs = self.duration_predictor(hs).squeeze(-1)
        outs = self.decoder(hs.repeat_interleave(2, dim=1))[:, : ys.size(1)]
        in_masks = torch.arange(xs.size(1), device=xs.device)[None, :] < ilens[:, None]
        out_masks = (torch.arange(ys.size(1), device=ys.device)[None, :] < olens[:, None]).unsqueeze(-1)
        outs = outs.masked_select(out_masks)
        ys = ys.masked_select(out_masks)
        l1_loss = self.criterion(outs, ys)
        duration_loss = self.duration_criterion(d_outs.masked_select(in_masks), ds.masked_select(in_masks).float())
        loss = l1_loss + duration_loss
        return loss, [{"l1_loss": l1_loss.item()}, {"duration_loss": duration_loss.item()}]


def train(hp, dataloader):
    model = FeedForwardTransformer(80, 80, 256).cuda()  # a module moved: still the class's `forward`
    optimizer = torch.optim.Adam(model.parameters(), lr=hp.lr)
    forward_count = 0
    for epoch in range(hp.epochs):
        for data in dataloader:
            x, input_length, y, out_length, dur = data
            loss, report_dict = model(x.cuda(), input_length.cuda(), y.cuda(), out_length.cuda(), dur.cuda())
            loss = loss.mean() / hp.accum_grad  # expect: TL017
            loss.backward()
            forward_count += 1
            if forward_count != hp.accum_grad:  # expect: TL010
                continue
            forward_count = 0
            torch.nn.utils.clip_grad_norm_(model.parameters(), hp.grad_clip)
            optimizer.step()
            optimizer.zero_grad()
