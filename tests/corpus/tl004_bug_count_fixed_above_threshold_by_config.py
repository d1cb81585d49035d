"""An Accelerate example's loop whose one call passes `config = {"batch_size": 64}`: above
`MAX_GPU_BATCH_SIZE`, so the count is 64 // 16 = 4, and `step % gradient_accumulation_steps == 0` steps
after the first micro-batch (off by one) and leaves the epoch's last micro-batches unapplied."""
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification

MAX_GPU_BATCH_SIZE = 16


def training_function(config, args):
    lr = config["lr"]
    num_epochs = int(config["num_epochs"])
    batch_size = int(config["batch_size"])

    gradient_accumulation_steps = 1
    if batch_size > MAX_GPU_BATCH_SIZE and not args.cpu:
        gradient_accumulation_steps = batch_size // MAX_GPU_BATCH_SIZE
        batch_size = MAX_GPU_BATCH_SIZE

    dataset = TensorDataset(torch.randint(0, 100, (100, 8)), torch.randint(0, 2, (100,)))
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased")
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    print(config)

    for epoch in range(num_epochs):
        model.train()
        for step, (input_ids, labels) in enumerate(loader):
            loss = model(input_ids=input_ids, labels=labels).loss
            loss = loss / gradient_accumulation_steps
            loss.backward()
            if step % gradient_accumulation_steps == 0:  # expect: TL004, TL010
                optimizer.step()
                optimizer.zero_grad()


def main(args):
    config = {"lr": 2e-5, "num_epochs": 3, "seed": 42, "batch_size": 64}
    training_function(config, args)
