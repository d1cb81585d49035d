"""A `DataLoaderLite` that walks a packed token stream: `buf` holds `B * T + 1` tokens, the inputs are
`buf[:-1]` and the targets `buf[1:]`, so every micro-batch has `B * T` targets and dividing the token mean
by `grad_accum_steps` is exactly the window's token mean."""
import torch
import torch.nn.functional as F


class DataLoaderLite:
    def __init__(self, tokens, B, T):
        self.tokens = tokens
        self.B = B
        self.T = T
        self.current_position = 0

    def next_batch(self):
        B, T = self.B, self.T
        buf = self.tokens[self.current_position:self.current_position + B * T + 1]
        x = (buf[:-1]).view(B, T)
        y = (buf[1:]).view(B, T)
        self.current_position += B * T
        if self.current_position + (B * T + 1) > len(self.tokens):
            self.current_position = 0
        return x, y


def main(model, tokens, max_steps=5000, grad_accum_steps=32):
    train_loader = DataLoaderLite(tokens, B=16, T=1024)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    for micro_step in range(max_steps * grad_accum_steps):
        x, y = train_loader.next_batch()
        x, y = x.to("cuda"), y.to("cuda")
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-100)
        loss = loss / grad_accum_steps
        loss.backward()
        if (micro_step + 1) % grad_accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
