"""Code-completion fine-tuning in the CodeXGLUE style: the loss is a mean over the positions a mask of the
batch selects, picked by their indices (`torch.nonzero(mask)`), not by the mask itself. Each micro-batch
holds as many selected tokens as its code bodies are long, so dividing that mean by the accumulation count
weighs a short body's tokens more. Three spellings of the indices (`torch.nonzero(m).view(-1)`,
`m.nonzero().squeeze(-1)`, `torch.where(m)[0]`), and a mask built with `torch.tensor` of a comparison and
cut with `...`."""
import torch
import torch.nn.functional as F
from torch.nn import CrossEntropyLoss


def train(model, loader, optimizer, args):
    for step, (batch, token_labels) in enumerate(loader):
        inputs = batch.to(args.device)
        loss_mask = torch.tensor(token_labels.clone().detach() == 2, dtype=torch.uint8, device=args.device)
        logits = model(inputs)[0]
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = inputs[..., 1:].contiguous()
        loss_fct = CrossEntropyLoss()
        flat_mask = loss_mask[..., :-1].contiguous().view(-1)
        ids = torch.nonzero(flat_mask).view(-1)
        loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1))[ids], shift_labels.view(-1)[ids])
        loss = loss / args.gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()


def train_method_call(model, loader, optimizer, accum):
    for step, (x, y, lengths) in enumerate(loader):
        logits = model(x)
        keep = torch.arange(y.size(1), device=y.device)[None, :] < lengths[:, None]
        rows = keep.view(-1).nonzero().squeeze(-1)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1))[rows], y.view(-1)[rows])
        (loss / accum).backward()  # expect: TL017
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def train_where(model, loader, optimizer, accum):
    for step, (x, y) in enumerate(loader):
        logits = model(x)
        picked = torch.where(y.view(-1) != 0)[0]
        loss = F.cross_entropy(logits.view(-1, logits.size(-1))[picked], y.view(-1)[picked])
        loss = loss / accum  # expect: TL017
        loss.backward()
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
