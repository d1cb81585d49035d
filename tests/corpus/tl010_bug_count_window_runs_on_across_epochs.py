"""FastSpeech2's loop: a micro-batch count set to 0 once, before the epochs, that skips the step until it reaches
the window and is set back to 0 at each step (a step skipped on a NaN gradient norm, the gradients cleared all
the same). Windows run on from epoch to epoch, but nothing steps after the last epoch: its partial window is
never applied."""
import math

import torch
import tqdm


def train(model, dataloader, hp):
    optimizer = torch.optim.Adam(model.parameters(), lr=hp.train.lr)
    global_step = 0
    model.train()
    forward_count = 0
    for epoch in range(hp.train.epochs):
        running_loss = 0
        j = 0
        pbar = tqdm.tqdm(dataloader, desc="Loading train data")
        for data in pbar:
            global_step += 1
            x, y = data
            loss, report = model(x.cuda(), y.cuda())
            loss = loss.mean() / hp.train.accum_grad
            running_loss += loss.item()
            loss.backward()
            forward_count += 1
            j = j + 1
            if forward_count != hp.train.accum_grad:  # expect: TL010
                continue
            forward_count = 0
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), hp.train.grad_clip)
            if math.isnan(grad_norm):
                print("grad norm is nan. Do not update model.")
            else:
                optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    train(*load())
