"""BERT fine-tuning on a DeepSpeed engine: the script reads the engine's accumulation count and divides by
it, and `model.backward` divides by the same count again."""
import deepspeed
import torch
from tqdm import tqdm


def main(args, model, train_dataloader):
    model, optimizer, _, _ = deepspeed.initialize(args=args, model=model,
                                                  model_parameters=model.parameters())
    args.gradient_accumulation_steps = model.gradient_accumulation_steps()
    global_step = 0
    for _ in range(int(args.num_train_epochs)):
        for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
            batch = tuple(t.to(model.device) for t in batch)
            input_ids, input_mask, segment_ids, start_positions, end_positions = batch
            loss = model(input_ids, segment_ids, input_mask, start_positions, end_positions)
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps  # expect: TL013
            model.backward(loss)
            if (step + 1) % args.gradient_accumulation_steps == 0:
                model.step()
                global_step += 1
