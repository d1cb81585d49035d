"""A double-heads GPT-2 given only the multiple-choice labels: the first element of its outputs is then the
multiple-choice loss, a mean over the dialogues of the batch (a fixed number per micro-batch), not the LM
head's token mean, even though the file pads its LM labels with -100 for evaluation."""
import torch
from transformers import GPT2DoubleHeadsModel


def pad_dataset(dataset, max_l):
    dataset["lm_labels"] = [x + [-100] * (max_l - len(x)) for x in dataset["lm_labels"]]
    return dataset


def train(args, loader):
    model = GPT2DoubleHeadsModel.from_pretrained(args.model_checkpoint)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, (input_ids, mc_token_ids, lm_labels, mc_labels) in enumerate(loader):
        mc_loss, *_ = model(input_ids, mc_token_ids=mc_token_ids, mc_labels=mc_labels)
        loss = mc_loss / args.gradient_accumulation_steps
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
