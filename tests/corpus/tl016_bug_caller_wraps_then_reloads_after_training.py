"""The run_classifier shape: `main` wraps the model in DDP under `args.local_rank != -1`, calls `train` with it,
then loads the saved model again for evaluation. Loading after the call does not change what `train` received.
The word `train` also appears as a string (`ttype="train"`), a keyword (`train=True`) and an attribute
(`args.train`). None of these hands the function on."""
import torch


def train(args, train_dataset, model, optimizer):
    loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size)
    model.zero_grad()
    for epoch in range(args.epochs):
        for step, batch in enumerate(loader):
            inputs = {"input_ids": batch[0], "labels": batch[1]}
            outputs = model(**inputs)  # expect: TL016
            loss = outputs[0] / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
                optimizer.step()
                model.zero_grad()


def load_examples(args, ttype="train"):
    return torch.load(f"{args.data_dir}/{ttype}.pt")


def main(args, model_class):
    model = model_class.from_pretrained(args.model_name)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    if args.train:
        train_dataset = load_examples(args, ttype="train")
        train(args, train_dataset, model, optimizer)
    model = model_class.from_pretrained(args.output_dir, train=True)
    return model
