"""A `run_clm_no_trainer.py` updated to `accelerator.accumulate` but still dividing the loss by hand:
`Accelerator.backward` divides by `gradient_accumulation_steps` again."""
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from transformers import AutoModelForCausalLM


def main(args, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              log_with="tensorboard", project_dir=args.output_dir)
    set_seed(args.seed)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    total_loss = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                total_loss += loss.detach().float()
                loss = loss / args.gradient_accumulation_steps  # expect: TL013
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
