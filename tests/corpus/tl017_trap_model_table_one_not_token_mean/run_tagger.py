"""The table also holds a CRF tagger, whose `forward` returns the CRF's negative log-likelihood of the whole
sequences (a sum per sequence, not a mean over tokens): which class runs depends on `--model_type`, so the
loss is not known to be a token mean, and the division is not reported."""
import torch
from transformers import BertConfig

from models.taggers import BertCrfTagger, BertSoftmaxTagger

MODEL_CLASSES = {
    "softmax": (BertConfig, BertSoftmaxTagger),
    "crf": (BertConfig, BertCrfTagger),
}


def train(args, loader, model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for step, batch in enumerate(loader):
        outputs = model(input_ids=batch[0], attention_mask=batch[1], labels=batch[2])
        loss = outputs[0]
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps
        loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def main(args, loader):
    config_class, model_class = MODEL_CLASSES[args.model_type]
    model = model_class.from_pretrained(args.model_name_or_path, config=config_class.from_pretrained(args.name))
    train(args, loader, model)
