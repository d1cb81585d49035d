"""Fine-tuning with accumulation where the warm-up schedule is sized in micro-batches
(`num_training_steps = epochs * len(loader)`): stepping it on every micro-batch spans the run exactly."""
import torch
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def train(args, train_loader):
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    num_training_steps = args.epochs * len(train_loader)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=int(0.06 * num_training_steps),
                                                num_training_steps=num_training_steps)
    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(train_loader):
            batch = {k: v.cuda() for k, v in batch.items()}
            loss = model(**batch).loss / args.accum_steps
            loss.backward()
            if (step + 1) % args.accum_steps == 0 or step + 1 == len(train_loader):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
            scheduler.step()
