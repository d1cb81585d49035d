"""Window facts: what a rescaling of the gradients divides by, and what a schedule's horizon counts."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.names import ModuleNames
from torchlint.training.loop import find_training_loops

_CODE = cst.Module(body=[])


def _loop(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    (loop,) = find_training_loops(module, ModuleNames(module))
    return loop


@pytest.mark.parametrize("rescale, divisor, constant", [
    ("for p in model.parameters(): p.grad.div_(accum)", "accum", True),
    ("for p in model.parameters(): p.grad /= 4", "4", True),
    ("for p in model.parameters(): p.grad.mul_(1 / tokens)", "tokens", False),
    ("scale_grads(model, 1 / tokens)", "tokens", False),
    ("normalise(model, cfg.accum)", "cfg.accum", True),
])
def test_the_divisor_of_a_gradient_rescaling(rescale, divisor, constant):
    loop = _loop(f"""
        def normalise(model, count):
            for p in model.parameters():
                p.grad /= count

        tokens = 0
        for i, (x, y) in enumerate(loader):
            tokens += y.numel()
            criterion(model(x), y).backward()
            if (i + 1) % accum == 0:
                {rescale}
                opt.step()
                opt.zero_grad()
    """)
    (scaling,) = loop.scalings
    assert _CODE.code_for_node(loop.gradient_divisor(scaling)) == divisor
    assert loop.divides_by_constant(scaling) is constant
    (step,) = loop.optimizer_steps
    check = loop.accumulation_check(step)
    assert (loop.gradients_divided(step, check) is not None) == constant
    assert (loop.gradients_normalised(step) is not None) != constant


@pytest.mark.parametrize("construction, counts", [
    ("CosineAnnealingLR(opt, T_max=len(loader) * epochs)", "micro-batches"),
    ("CosineAnnealingLR(opt, len(loader) // accum * epochs)", "updates"),
    ("OneCycleLR(opt, max_lr=0.1, epochs=epochs, steps_per_epoch=len(loader))", "micro-batches"),
    ("OneCycleLR(opt, max_lr=0.1, epochs=epochs, steps_per_epoch=math.ceil(len(loader) / accum))", "updates"),
    ("CosineAnnealingLR(opt, T_max=total_updates)", None),
    ("LambdaLR(opt, lambda s: 1.0)", None),
])
def test_what_a_schedule_horizon_counts(construction, counts):
    loop = _loop(f"""
        import math
        from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, OneCycleLR
        sched = {construction}
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            sched.step()
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
    """)
    (scheduler,) = loop.scheduler_steps
    (step,) = loop.optimizer_steps
    assert loop.schedule_counts(scheduler, loop.accumulation_check(step)) == counts
