"""Dialogue fine-tuning of a double-heads GPT-2: the file pads the reply labels with -100 itself, so the LM
head's loss is a mean over each micro-batch's reply tokens; the weighted sum with the multiple-choice loss is
divided by `gradient_accumulation_steps` (ignite's `update` is the loop body)."""
import torch
from ignite.engine import Engine
from transformers import GPT2DoubleHeadsModel, OpenAIGPTDoubleHeadsModel

PADDED_INPUTS = ["input_ids", "lm_labels", "token_type_ids"]


def pad_dataset(dataset, padding=0):
    max_l = max(len(x) for x in dataset["input_ids"])
    for name in PADDED_INPUTS:
        dataset[name] = [x + [padding if name != "lm_labels" else -100] * (max_l - len(x)) for x in dataset[name]]
    return dataset


def train(args, train_loader):
    model_class = GPT2DoubleHeadsModel if "gpt2" in args.model_checkpoint else OpenAIGPTDoubleHeadsModel
    model = model_class.from_pretrained(args.model_checkpoint)
    model.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    def update(engine, batch):
        model.train()
        batch = tuple(input_tensor.to(args.device) for input_tensor in batch)
        input_ids, mc_token_ids, lm_labels, mc_labels, token_type_ids = batch
        (lm_loss), (mc_loss), *_ = model(
            input_ids, token_type_ids=token_type_ids, mc_token_ids=mc_token_ids,
            mc_labels=mc_labels, lm_labels=lm_labels
        )
        loss = (lm_loss * args.lm_coef + mc_loss * args.mc_coef) / args.gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if engine.state.iteration % args.gradient_accumulation_steps == 0:  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
        return loss.item()

    trainer = Engine(update)
    trainer.run(train_loader, max_epochs=args.n_epochs)
