"""TL013 double-loss-scaling: the loss divided by the accumulation count that the framework divides by again.

## What it does

Flags a division of the loss by the gradient-accumulation count (`loss / N`,
`loss /= N`, `loss * (1 / N)`, `loss.div(N)`) when the framework that runs
the backward divides by that same count itself:

- `accelerator.backward(loss)` of an `Accelerator` built in the file with
  `gradient_accumulation_steps=N` (or a `GradientAccumulationPlugin`), or a
  loss divided by `accelerator.gradient_accumulation_steps`;
- a DeepSpeed engine's `engine.backward(loss)` with the loss divided by
  `engine.gradient_accumulation_steps()` (also through a name assigned it);
- the loss a LightningModule's `training_step` returns (also as `{"loss":
  ...}`) under automatic optimisation, divided by the `accumulate_grad_batches`
  a Lightning `Trainer` of the same file is built with (the same number or
  name, or `self.trainer.accumulate_grad_batches`): Lightning divides what
  `training_step` returns by that count before its backward. Reported
  without a fix.

The finding is on the division: that is the line to change.

## Why is this bad?

`Accelerator.backward` computes `loss / gradient_accumulation_steps` before
calling `backward()` (DeepSpeed's engine does the same with its own count
unless `scale_wrt_gas=False`). Divided by hand as well, the loss is
divided by `N²`: every step applies `1/N` of the large-batch gradient, as if
the learning rate were `N` times smaller (and Adam's epsilon and gradient
clipping weigh `N` times more). Training is slower or stalls, with no error.

## Example

```python
accelerator = Accelerator(gradient_accumulation_steps=4)
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss / 4)
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead

```python
accelerator = Accelerator(gradient_accumulation_steps=4)
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
```

Not flagged: an `Accelerator` built without `gradient_accumulation_steps`
(it divides by 1: the manual division is the one that counts), `loss.backward()`
called directly, `engine.backward(loss, scale_wrt_gas=False)`, Fabric (which does not
scale), and a division by anything other than the accumulation
count (a token count, a number of losses, a temperature).

## Fix safety

Safe when the division sits in the expression handed to the framework
(`accelerator.backward(loss / N)`): the fix drops it and
nothing else reads that value. Unsafe when the division is an assignment
(`loss = loss / N`, `loss /= N`): the fix deletes or undoes it, and every other
reader of `loss` (a logged value, a running total) then sees the undivided loss.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import ERROR, SAFE, UNSAFE, Fix
from torchlint.names import dotted_name, int_value, keyword, string_value
from torchlint.rules import Example, Finding, Rule
from torchlint.training.calls import Functions
from torchlint.training.loop import manual_optimisation
from torchlint.training import TrainingLoop
from torchlint.training.frameworks import FrameworkScaling, backward_scaling
from torchlint.training.origin import Division
from torchlint.training.timeline import EXAMPLE_COUNT, EXAMPLE_LENGTH, Run
from torchlint.walk import preorder


class DoubleLossScaling(Rule):
    code = "TL013"
    name = "double-loss-scaling"
    severity = ERROR
    summary = "loss divided by the accumulation count that the framework already divides by"

    def check(self, context: FileContext) -> Iterator[Finding]:
        reported = set()
        for loop in context.loops:
            for backward in loop.loop_backwards:
                scaling = backward_scaling(backward, context.names)
                if scaling is None:
                    continue
                for division in loop.divisions(backward.loss, backward):
                    if id(division.node) in reported or not scaling.divides_by(loop, division.divisor):
                        continue
                    reported.add(id(division.node))
                    yield self._finding(context, division, backward.point[0], scaling.framework, scaling.where,
                                        _loop_timeline(loop, scaling, division))
        yield from self._lightning(context)

    def _lightning(self, context: FileContext) -> Iterator[Finding]:
        """`training_step` of a LightningModule under automatic optimisation returning its loss divided by
        the `accumulate_grad_batches` a Trainer of the file is built with: Lightning divides it again."""
        if "accumulate_grad_batches" not in context.source:
            return
        counts = _trainer_counts(context)
        if not counts:
            return
        functions = Functions(context.module, context.names)
        for class_def, step in _automatic_training_steps(context):
            for value, _ in functions.returns(step):
                loss = value
                if isinstance(value, cst.Dict):
                    loss = next((e.value for e in value.elements if isinstance(e, cst.DictElement)
                                 and string_value(e.key) == "loss"), None)
                for division in _returned_divisions(functions, step, loss):
                    divisor = context.code(division.right)
                    match = next((count for count in counts if _same_count(context, division.right, count)), None)
                    if match is None:
                        continue
                    message = (
                        f"`{context.code(division)}` divides the loss `{step.name.value}` returns by the accumulation "
                        f"count, and Lightning's automatic optimisation divides it by `accumulate_grad_batches` "
                        f"(`{context.code(match)}`) again before `backward()`: each step applies 1/`{divisor}` of the "
                        f"large-batch gradient. Return the undivided loss."
                    )
                    count = int_value(match)
                    yield Finding(division, message, timeline=_timeline("Lightning", count, context.code(match)))

    @staticmethod
    def _finding(context: FileContext, division: Division, use: int, framework: str, where: str,
                 timeline: Optional[str]) -> Finding:
        dividend, divisor = context.code(division.dividend), context.code(division.divisor)
        message = (
            f"`{dividend}` is divided by `{divisor}`, and {where} divides it by the accumulation count again "
            f"({framework} scales the loss itself): each step applies 1/`{divisor}` of the large-batch gradient. "
            f"Leave the division to {framework}."
        )
        return Finding(division.node, message, _fix(context, division, use), timeline=timeline)

    valid = (
        # No `gradient_accumulation_steps`: the Accelerator divides by 1, the manual division is the only one.
        """
from accelerate import Accelerator
accelerator = Accelerator()
for i, batch in enumerate(loader):
    loss = model(**batch).loss
    loss = loss / args.gradient_accumulation_steps
    accelerator.backward(loss)
    if (i + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # The framework's own division only.
        """
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=4)
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
        # A division by something else: the number of losses averaged.
        """
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=4)
for batch in loader:
    with accelerator.accumulate(model):
        losses = [head(batch) for head in heads]
        accelerator.backward(sum(losses) / len(losses))
        optimizer.step()
        optimizer.zero_grad()
""",
        # DeepSpeed told not to scale.
        """
import deepspeed
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
for batch in loader:
    loss = engine(batch) / engine.gradient_accumulation_steps()
    engine.backward(loss, scale_wrt_gas=False)
    engine.step()
""",
    )
    invalid = (
        Example(
            """
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=4)
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss / 4)
        optimizer.step()
        optimizer.zero_grad()
""",
            line=7,
            fixed="""
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=4)
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Example(
            """
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
for step, batch in enumerate(loader):
    with accelerator.accumulate(model):
        outputs = model(**batch)
        loss = outputs.loss
        loss = loss / args.gradient_accumulation_steps
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
            line=8,
            unsafe=True,
            fixed="""
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
for step, batch in enumerate(loader):
    with accelerator.accumulate(model):
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        # DeepSpeed's engine divides by its own count.
        Example(
            """
import deepspeed
model, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=params)
args.gradient_accumulation_steps = model.gradient_accumulation_steps()
for step, batch in enumerate(loader):
    loss = model(batch)
    if args.gradient_accumulation_steps > 1:
        loss = loss / args.gradient_accumulation_steps
    model.backward(loss)
    model.step()
""",
            line=8,
            unsafe=True,
            fixed="""
import deepspeed
model, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=params)
args.gradient_accumulation_steps = model.gradient_accumulation_steps()
for step, batch in enumerate(loader):
    loss = model(batch)
    if args.gradient_accumulation_steps > 1:
        pass
    model.backward(loss)
    model.step()
""",
        ),
    )


def _fix(context: FileContext, division: Division, use: int) -> Optional[Fix]:
    """Drop the division: safe inside the expression the framework gets, unsafe at an assignment."""
    dividend = context.code(division.dividend)
    definition = division.definition
    if definition is None and division.at == use:
        return Fix(SAFE, f"Drop the division by `{context.code(division.divisor)}`",
                   (context.replace(division.node, dividend),))
    title = f"Drop the division by `{context.code(division.divisor)}` (other readers of `{dividend}` see it undivided)"
    if definition is not None and dotted_name(division.dividend) == definition.name:
        line = division.statement
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            return Fix(UNSAFE, title, (context.delete_lines(line),))
        return None
    if isinstance(division.node, cst.BaseExpression):
        return Fix(UNSAFE, title, (context.replace(division.node, dividend),))
    return None


# --- the timeline ---------------------------------------------------------------------------


def _loop_timeline(loop: TrainingLoop, scaling: FrameworkScaling, division: Division) -> Optional[str]:
    """The loop's own window when a step is guarded by one, else the framework's."""
    for step in loop.optimizer_steps:
        check = loop.accumulation_check(step)
        run = loop.run_of(step, check) if check is not None else None
        if run is not None and run.steps:
            return run.lines(_expected(scaling.framework, run.count))
    count_code = cst.Module([]).code_for_node(division.divisor)
    return _timeline(scaling.framework, loop.count_value(division.divisor), count_code, scaling.steps_on_last)


def _timeline(framework: str, count: Optional[int], count_code: str, steps_on_last: bool = True) -> Optional[str]:
    """The framework's windows on an example run: it steps every `count` micro-batches, and after the last one
    where it `steps_on_last` (`FrameworkScaling.steps_on_last`)."""
    known = count is not None and count > 1
    count = count if known else EXAMPLE_COUNT
    steps = tuple(range(count, EXAMPLE_LENGTH + 1, count))
    if steps_on_last and steps[-1] != EXAMPLE_LENGTH:
        steps += (EXAMPLE_LENGTH,)
    count_text = f"N = {count}" if count_code == str(count) else f"{count_code} = {count}"
    count_text += "" if known else ", an example value"
    run = Run(count, EXAMPLE_LENGTH, steps, count_text, f"an example run of {EXAMPLE_LENGTH} micro-batches")
    return run.lines(_expected(framework, count))


def _expected(framework: str, count: int) -> str:
    return (f"each loss divided once, by {framework}, so each step applies its window's mean gradient "
            f"(divided twice: 1/{count} of it)")


_TRAINERS = ("lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer",
             "lightning.pytorch.trainer.trainer.Trainer", "pytorch_lightning.trainer.trainer.Trainer")
_MODULES = ("lightning.LightningModule", "lightning.pytorch.LightningModule", "pytorch_lightning.LightningModule",
            "lightning.pytorch.core.LightningModule", "pytorch_lightning.core.LightningModule")


def _trainer_counts(context: FileContext) -> List[cst.BaseExpression]:
    """The `accumulate_grad_batches=` values of the Lightning Trainers the file builds (more than 1)."""
    counts = []
    for part in preorder(context.module):
        if isinstance(part, cst.Call) and context.names.callee(part) in _TRAINERS:
            value = keyword(part, "accumulate_grad_batches")
            if value is not None and int_value(value) != 1:
                counts.append(value)
    return counts


def _automatic_training_steps(context: FileContext) -> Iterator[Tuple[cst.ClassDef, cst.FunctionDef]]:
    for part in preorder(context.module):
        if not isinstance(part, cst.ClassDef) or manual_optimisation(part):
            continue
        if not any(context.names.qualify(base.value) in _MODULES for base in part.bases):
            continue
        for statement in part.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == "training_step":
                yield part, statement


def _returned_divisions(functions: Functions, step: cst.FunctionDef,
                        loss: Optional[cst.BaseExpression]) -> List[cst.BinaryOperation]:
    """`loss / N` returned, directly or through the one assignment of the returned name."""
    if isinstance(loss, cst.BinaryOperation) and isinstance(loss.operator, cst.Divide):
        return [loss]
    if isinstance(loss, cst.Name):
        flow = functions.flow(step)
        found = []
        for node in flow.graph.nodes:
            for definition in node.definitions:
                if definition.name == loss.value and definition.kind == "assign" \
                        and isinstance(definition.value, cst.BinaryOperation) \
                        and isinstance(definition.value.operator, cst.Divide):
                    found.append(definition.value)
                elif definition.name == loss.value and definition.kind == "augmented" \
                        and definition.operator == "/=":
                    found.append(cst.BinaryOperation(cst.Name(loss.value), cst.Divide(), definition.value))
        return [division for division in found if division.right is not None]
    return []


def _same_count(context: FileContext, divisor: cst.BaseExpression, count: cst.BaseExpression) -> bool:
    """The divisor is the Trainer's count: the same literal, the same spelling, or Lightning's own
    `self.trainer.accumulate_grad_batches`."""
    if int_value(divisor) is not None:
        return int_value(divisor) == int_value(count)
    code = context.code(divisor)
    return code == context.code(count) or code.endswith("accumulate_grad_batches") or (
        dotted_name(count) is not None and code.split(".")[-1] == dotted_name(count).split(".")[-1])
