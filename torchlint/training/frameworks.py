"""Frameworks that divide the loss by the accumulation count themselves, and what they divide by.

Read from their sources: Accelerate's `Accelerator.backward` divides the loss by
`gradient_accumulation_steps` (except under DeepSpeed, whose engine does it); a DeepSpeed
engine's `backward(loss)` divides it by `engine.gradient_accumulation_steps()` unless given
`scale_wrt_gas=False`; Lightning's automatic optimisation divides what `training_step`
returns by the Trainer's `accumulate_grad_batches`. Only what the file shows counts: an
`Accelerator` built here with `gradient_accumulation_steps=` (or a plugin), a receiver bound to
`deepspeed.initialize(...)` or read for its own `gradient_accumulation_steps()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Tuple

import libcst as cst

from torchlint.names import ModuleNames, dotted_name, int_value, is_true, keyword, positional

if TYPE_CHECKING:
    from torchlint.training.loop import TrainingLoop
    from torchlint.training.sites import BackwardSite

_ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
_PLUGINS = frozenset({"accelerate.utils.GradientAccumulationPlugin",
                      "accelerate.utils.dataclasses.GradientAccumulationPlugin"})
COUNT_ATTRIBUTE = "gradient_accumulation_steps"  # Accelerate's attribute, DeepSpeed's method


@dataclass(frozen=True)
class FrameworkScaling:
    """A backward that divides the loss by the accumulation count: whose, and by what."""

    framework: str  # Accelerate | DeepSpeed
    owner: str  # `accelerator`, `model_engine`: the backward's receiver
    counts: Tuple[cst.BaseExpression, ...]  # what the file configured it with: `args.gradient_accumulation_steps`

    def divides_by(self, loop: "TrainingLoop", divisor: cst.BaseExpression) -> bool:
        """`divisor` is the count this framework divides by again: the configured value, or the
        framework's own count read back (`accelerator.gradient_accumulation_steps`,
        `engine.gradient_accumulation_steps()`), directly or through names assigned it."""
        owners = loop.names.aliases_of(self.owner) if loop.names is not None else {self.owner}
        for value in _resolutions(loop, divisor):
            if any(loop.same_count(value, count) for count in self.counts):
                return True
            read = value.func if isinstance(value, cst.Call) and not value.args else value
            if isinstance(read, cst.Attribute) and read.attr.value == COUNT_ATTRIBUTE \
                    and dotted_name(read.value) in owners:
                return (read is value) == (self.framework == "Accelerate")
        return False

    @property
    def where(self) -> str:
        return f"`{self.owner}.backward()`"


def _resolutions(loop: "TrainingLoop", node: cst.BaseExpression) -> List[cst.BaseExpression]:
    """`node`, then the value its name had before the loop, and so on (a few steps)."""
    found = [node]
    for _ in range(3):
        name = dotted_name(found[-1])
        value = loop.known_value(name) if name is not None else None
        if value is None or any(value is seen for seen in found):
            break
        found.append(value)
    return found


def backward_scaling(backward: "BackwardSite", names: ModuleNames) -> Optional[FrameworkScaling]:
    """How the framework behind `accelerator.backward(loss)` / `engine.backward(loss)` divides the loss."""
    if backward.kind != "framework" or backward.receiver is None or backward.loss is None:
        return None
    owner = backward.receiver
    call = backward.node
    if isinstance(call, cst.Call) and keyword(call, "scale_wrt_gas") is not None \
            and not is_true(keyword(call, "scale_wrt_gas")):
        return None  # DeepSpeed told not to scale
    built = [value for alias in names.aliases_of(owner) for value in names.values_of(alias)]
    accelerators = [call for value in built for call in _branches(value)
                    if isinstance(call, cst.Call) and names.callee(call) in _ACCELERATORS]
    if accelerators:
        if len(accelerators) != len([c for value in built for c in _branches(value) if isinstance(c, cst.Call)
                                     and names.callee(c) is not None]):
            return FrameworkScaling("Accelerate", owner, ())
        counts = []
        for accelerator in accelerators:
            count = _accelerator_count(accelerator, names)
            if count is not None:
                counts.append(count)
        return FrameworkScaling("Accelerate", owner, tuple(counts) if len(counts) == len(accelerators) else ())
    # A DeepSpeed engine (`deepspeed.initialize`), or any receiver whose own `gradient_accumulation_steps()`
    # the loss is divided by: that is the engine's API, whatever built it.
    return FrameworkScaling("DeepSpeed", owner, ())


def _branches(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """`a if c else b` -> [a, b]."""
    if isinstance(value, cst.IfExp):
        return _branches(value.body) + _branches(value.orelse)
    return [value]


def _accelerator_count(call: cst.Call, names: ModuleNames) -> Optional[cst.BaseExpression]:
    """The `gradient_accumulation_steps=` of an `Accelerator(...)`, or its plugin's `num_steps=`; None
    when not configured here (or configured as 1)."""
    count = keyword(call, COUNT_ATTRIBUTE)
    plugin = keyword(call, "gradient_accumulation_plugin")
    if count is None and plugin is not None:
        values = [plugin] if isinstance(plugin, cst.Call) else names.values_of(dotted_name(plugin) or "")
        for value in values:
            if isinstance(value, cst.Call) and names.callee(value) in _PLUGINS:
                count = keyword(value, "num_steps") or positional(value, 0)
    if count is None or int_value(count) == 1:
        return None
    return count
