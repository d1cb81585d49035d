"""`main.py` builds the model (a `MetaModel`, wrapped in FSDP) and hands it to `train_one_epoch`: its loss is
a mean over each micro-batch's labelled tokens, and the extra terms added to it in a loop keep that part."""
import math


def train_one_epoch(model, data_loader, optimizer, loss_scaler, accum_iter):
    optimizer.zero_grad()
    for data_iter_step, (examples, labels) in enumerate(data_loader):
        c_loss, additional_loss_dict = model(examples, labels)
        loss = c_loss
        for add_loss, weight in additional_loss_dict.values():
            loss = loss + add_loss * weight
        if not math.isfinite(loss.item()):
            raise SystemExit(1)
        loss /= accum_iter  # expect: TL017
        loss.backward()
        if (data_iter_step + 1) % accum_iter == 0 or data_iter_step + 1 == len(data_loader):
            optimizer.step()
            optimizer.zero_grad()
