"""TL011 backward-under-no-grad: `backward()` on a loss computed with gradients disabled.

## What it does

Flags `backward()` in a training loop when the loss was computed inside
`with torch.no_grad():`, `with torch.inference_mode():` or
`with torch.set_grad_enabled(False):`, or in a function decorated with
`@torch.no_grad()` / `@torch.inference_mode()` — or computed after the block,
but only from what the block computed: `loss = outputs.loss` on outputs of
a forward pass under `inference_mode()`, or `F.kl_div(...)` of student and
teacher logits that were both computed under `no_grad()` (with torch
functions, loss modules, numbers and the loop's data, nothing that could
hold parameters).

## Why is this bad?

Nothing computed with gradients disabled is recorded in the graph, so the
loss has no `grad_fn` and `backward()` fails with "element 0 of tensors does
not require grad and does not have a grad_fn" — usually after the data
loading and the first forward pass, on a GPU job that waited in a queue for
hours. The evaluation code was probably copied into the training loop, or a
decorator meant for `evaluate()` ended up on `train()`.

## Example

```python
for x, y in loader:
    with torch.no_grad():
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
```

## Use instead

```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

Not flagged: a loss computed before entering the block (its graph exists;
only the code inside the block is not recorded); a loss that mixes a target
computed under `no_grad()` with a model's output computed outside it (DQN's
TD target, a teacher's logits); `torch.set_grad_enabled(phase == "train")`;
`with torch.enable_grad():` inside a `no_grad` function.

## Fix safety

No fix: which computation was meant to be recorded is a decision only the
author can make. Move the forward pass and the loss out of the no-grad
block, or remove the decorator from the training function.
"""

from __future__ import annotations

from typing import Iterator

from torchlint.context import FileContext
from torchlint.model import ERROR
from torchlint.rules import Example, Finding, Rule


class BackwardUnderNoGrad(Rule):
    code = "TL011"
    name = "backward-under-no-grad"
    severity = ERROR
    summary = "`backward()` on a loss computed with gradients disabled"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            for backward in loop.loop_backwards:
                if backward.loss is None:
                    continue
                disabled = loop.computed_without_grad(backward, context.names)
                if disabled is None:
                    continue
                loss = context.code(backward.loss)
                message = (
                    f"`{loss}` is computed under `{context.code(disabled)}`, so it has no graph: "
                    f"`{context.code(backward.node)}` fails with \"element 0 of tensors does not require grad "
                    f"and does not have a grad_fn\". Compute the loss with gradients enabled."
                )
                yield Finding(backward.node, message)

    valid = (
        """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val = criterion(model(vx), vy)
""",
        # Loss computed before the block: the graph exists.
        """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    with torch.no_grad():
        ema.update(model)
        loss.backward()
    optimizer.step()
""",
        """
import torch
@torch.no_grad()
def evaluate(model, loader):
    return sum(criterion(model(x), y).item() for x, y in loader)

for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # Only the target is computed without gradients; the prediction has its graph.
        """
import torch
import torch.nn.functional as F
for s, a, r, s2 in replay:
    with torch.no_grad():
        target = r + gamma * target_net(s2).max(1).values
    q = policy_net(s).gather(1, a).squeeze(1)
    F.smooth_l1_loss(q, target).backward()
    optimizer.step()
""",
    )
    invalid = (
        Example(
            """
import torch
for x, y in loader:
    with torch.no_grad():
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
""",
            line=6,
        ),
        Example(
            """
from torch import inference_mode
@inference_mode()
def train_epoch(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
""",
            line=7,
        ),
        Example(
            """
import torch
for batch in loader:
    with torch.set_grad_enabled(False):
        outputs = model(**batch)
    outputs.loss.backward()
    optimizer.step()
""",
            line=6,
        ),
        # Read after the block from what the block computed.
        Example(
            """
import torch
for batch in loader:
    with torch.inference_mode():
        outputs = model(**batch)
        metric.add_batch(predictions=outputs.logits.argmax(-1))
    loss = outputs.loss
    loss.backward()
    optimizer.step()
""",
            line=8,
        ),
        # The student's logits went into the teacher's block: the loss has no graph.
        Example(
            """
import torch
import torch.nn.functional as F
def distill(student, teacher, loader, optimizer, T=2.0):
    for x, y in loader:
        with torch.no_grad():
            teacher_logits = teacher(x)
            student_logits = student(x)
        loss = F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1))
        loss = loss + F.cross_entropy(student_logits, y)
        loss.backward()
        optimizer.step()
""",
            line=11,
        ),
    )
