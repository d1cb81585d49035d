"""The loss is the first element of what the tagger's `forward` returns, a mean over the active tokens of the
micro-batch (`models/taggers.py`): every class the table holds computes one, so the division by the
accumulation count weighs the tokens of short micro-batches more, whichever model the user picks."""
import torch
from transformers import BertConfig, RobertaConfig

from models.taggers import BertSoftmaxTagger, RobertaSoftmaxTagger

MODEL_CLASSES = {
    "bert": (BertConfig, BertSoftmaxTagger),
    "roberta": (RobertaConfig, RobertaSoftmaxTagger),
}


def train(args, loader, model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)
    for step, batch in enumerate(loader):
        batch = tuple(t.to(args.device) for t in batch)
        outputs = model(input_ids=batch[0], attention_mask=batch[1], labels=batch[2])
        loss = outputs[0]
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(args, loader):
    config_class, model_class = MODEL_CLASSES[args.model_type]
    config = config_class.from_pretrained(args.model_name_or_path)
    model = model_class.from_pretrained(args.model_name_or_path, config=config)
    train(args, loader, model)
