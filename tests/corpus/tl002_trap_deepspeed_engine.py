"""DeepSpeed: the engine's `step()` also resets gradients and handles accumulation."""
import deepspeed


def train(args, model, loader):
    model_engine, optimizer, _, _ = deepspeed.initialize(
        args=args, model=model, model_parameters=model.parameters()
    )
    for step, batch in enumerate(loader):
        loss = model_engine(batch["input_ids"], labels=batch["labels"])
        model_engine.backward(loss)
        model_engine.step()
        if step % args.log_interval == 0 and model_engine.global_rank == 0:
            print(f"step {step}: loss {loss.item():.4f}")
