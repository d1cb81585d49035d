"""Update-count driven loop with a micro-batch counter and a user loss function."""


def train(cfg, model, optimizer, data_iter, compute_loss):
    micro_step = 0
    updates = 0
    while updates < cfg.train.total_updates:
        batch = next(data_iter)
        loss = compute_loss(model, batch)
        loss.backward()  # expect: TL003
        micro_step += 1
        if micro_step == cfg.train.accum:
            optimizer.step()
            optimizer.zero_grad()
            micro_step = 0
            updates += 1
