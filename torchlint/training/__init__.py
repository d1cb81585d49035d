"""Training-loop facts: the domain on top of `torchlint.flow`.

- `sites`: where backwards, steps, resets, scalings, calls and assignments happen in a loop body;
- `roles`: what the receivers are (optimizer, scheduler, scaler, framework) and what helpers do to gradients;
- `windows`: micro-batch counters and the conditions that step once per accumulation window;
- `origin`: where a loss comes from, its reduction, and whether it was divided on every path;
- `tokens`: whether every micro-batch's targets hold the same number of tokens (cut from a packed stream);
- `graph`: which values carry an autograd graph and what cuts it (one table of effects);
- `nodes`: which graph nodes a tensor is computed from, to tell whether two backwards share a graph;
- `wrapping`: which model a loop runs is a DDP one, wrapped in its function or by its callers, and when;
- `loop`: the `TrainingLoop` facade that answers the questions more than one rule asks.

A predicate only one rule needs lives in that rule's module.
"""

from torchlint.training.loop import TrainingLoop, find_training_loops, grad_mode
from torchlint.training.origin import LossOrigin
from torchlint.training.sites import (
    Assignment, BackwardSite, CallSite, Guard, ResetSite, ScaleSite, Site, StepSite,
)
from torchlint.training.windows import AccumulationCheck, LoopCounter

__all__ = [
    "AccumulationCheck", "Assignment", "BackwardSite", "CallSite", "Guard", "LoopCounter", "LossOrigin", "ResetSite",
    "ScaleSite", "Site", "StepSite", "TrainingLoop", "find_training_loops", "grad_mode",
]
