"""The accumulation count is DeepSpeed's: its engine steps inside `backward`, the loop's `step()` is a no-op."""
from accelerate import Accelerator


def training_function(model, optimizer, train_dataloader, num_epochs):
    accelerator = Accelerator()
    if accelerator.state.deepspeed_plugin is not None:
        gradient_accumulation_steps = accelerator.state.deepspeed_plugin.deepspeed_config[
            "gradient_accumulation_steps"
        ]
    else:
        gradient_accumulation_steps = 1
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(num_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch).loss / gradient_accumulation_steps
            accelerator.backward(loss)
            if step % gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
