"""TL017 token-mean-under-accumulation: a mean over each micro-batch's tokens divided by the accumulation count.

## What it does

Flags the division by the accumulation count (`loss / N`, `loss /= N`) in a
gradient-accumulation loop when the loss is a mean over a number of tokens
that varies from one micro-batch to the next:

- a cross-entropy or NLL loss given `ignore_index=` (padding and prompt
  positions do not count), as a function (`F.cross_entropy(..., ignore_index=-100)`)
  or a criterion built with it, over the tokens of a batch of sequences (its
  input or target flattened: `logits.view(-1, vocab)`, `labels.flatten()`);
- a masked mean: `(loss * mask).sum() / mask.sum()` (the count kept from zero
  by a constant floor too: `torch.max(mask.sum(), torch.tensor(1))`,
  `torch.clamp(n, min=1)`, `max(n, 1)`; or the size of the selection:
  `losses.sum() / len(labels[mask])`, `.numel()`, `.size(0)`, `.shape[0]`),
  `.masked_select(mask).mean()`,
  or a mean-reduced criterion over the elements a mask selects
  (`self.criterion(outs.masked_select(mask), ys.masked_select(mask))` of a
  `self.criterion = nn.L1Loss()`, `loss_fct(logits.view(-1, n)[active], ...)`),
  or by their positions (`logits.view(-1, n)[torch.nonzero(mask).view(-1)]`,
  `mask.nonzero()`, `torch.where(mask)[0]`), where the mask is the
  micro-batch's own: a comparison of its data (`attention_mask == 1`,
  `positions < lengths[:, None]`, `torch.tensor(labels == 2)`) or a mask it
  comes with;
- `outputs.loss` of a Hugging Face language model (`...ForCausalLM`,
  `...LMHeadModel`, `...ForSeq2SeqLM`, `...ForMaskedLM`,
  `...ForConditionalGeneration`, `...DoubleHeadsModel`) or token classifier
  (`...ForTokenClassification`) in a file that pads or
  masks its labels, with a data collator (`DataCollatorForSeq2Seq`,
  `DataCollatorForLanguageModeling`, `DataCollatorForTokenClassification`,
  `DataCollatorForCompletionOnlyLM`) or by writing -100 into them itself
  (`x + [-100] * (max_l - len(x))`); also the first element of its outputs
  when the call gives it labels (`outputs[0]`, `lm_loss, mc_loss, *_ = model(...,
  lm_labels=lm_labels)`, `model(**inputs)` of a dict holding `labels`). Every
  binding of the model's name must build such a model, or wrap or move one
  (`DataParallel(model)`, `DDP(model.cuda())`, `model.to(device)`);
- any of those returned by the `forward` of the loop's model or criterion, a
  class of the project (in the file or another one, or every class of a table
  such as `MODEL_CLASSES[args.model_type]`), read on the paths the call takes:
  `loss = model(ids, mask, labels)`, `outputs[0]`, `loss, logits = model(...)`
  of a `forward` that computes its loss when given labels (by keyword, by
  position, or in a dict: `model(**inputs)`) or when a flag the call passes as
  a literal says so (`model(ids, True)` of `forward(self, ids, train=False)`
  with `if train:`); a class of the project's package under `src/` counts.
  The model is what reaches the call: `model = Model(encoder)` after `model =
  RobertaModel.from_pretrained(...)` is the project's `Model`, and a `train(args,
  model)` gets what each of the file's calls passes there;
- any of those scaled by a coefficient (`lm_loss * args.lm_coef`,
  `(start_loss + end_loss) / 2`) or summed with other losses, also added after
  (`loss += aux`, `loss = loss + aux`): the token mean's part of the gradient
  is mis-weighted whatever the other terms are.

The finding is on the division: that is the line to change.

## Why is this bad?

Each micro-batch's loss is already an average over *its own* real tokens.
Dividing by `N` and summing over the window gives every micro-batch the same
weight, `1/N`, however many tokens it holds: a token of a micro-batch with 10
real tokens weighs ten times a token of one with 100. The update is not the
gradient of the window's token mean that one large batch would give; short,
heavily padded sequences are over-weighted. This was the gradient-accumulation
bug of Hugging Face's Trainer until late 2024: losses came out higher with
accumulation than without, and models trained differently.

## Example

```python
for i, batch in enumerate(loader):
    logits = model(batch["input_ids"])
    loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
    loss = loss / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead

```python
for i, window in enumerate(windows):  # the window's micro-batches, known up front
    n_tokens = sum((batch["labels"] != -100).sum() for batch in window)
    for batch in window:
        logits = model(batch["input_ids"])
        loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(),
                               ignore_index=-100, reduction="sum")
        (loss / n_tokens).backward()
    optimizer.step()
    optimizer.zero_grad()
```

(Or sum each micro-batch's loss with `reduction="sum"`, count the window's
tokens as you go, and divide the gradients by that count before the step:
`p.grad.div_(n_tokens)`.)

Not flagged: per-sample means over a fixed batch size (plain `F.cross_entropy`
on image classes, `MSELoss`, a masked sum divided per sample,
`(x * mask).sum(1) / mask.sum(1)`, then averaged), a mean over a mask of
constant shapes or drawn at random (`torch.ones(b, t).bool()`, a buffer,
`torch.rand(...) < p`: as many elements, or a count that does not follow the
data), the first output of a language model not given labels, a segmentation loss over whole `(N, C, H, W)`
maps with a void label (`ignore_index=255`: few, similar counts ignored),
targets cut at a fixed length from one packed token stream beside the inputs
(`y = data[i + 1 : i + 1 + block]`, nanoGPT's `get_batch`, `buf[1:]` of a
fixed `buf`: every micro-batch holds the same number of tokens, whatever
`ignore_index=` says), a sum-reduced token loss or one whose reduction the
run chooses (`reduction=args.reduction`), a loss divided by a
token count rather than by `N`, gradients divided by the window's token count
before the step (token-count normalisation, which TL003 checks), and a
framework that divides by `N` itself (TL013 reports a division by hand there).
A model whose class is not shown (a library's, or one of several classes of
which one returns no token mean: a language model on one branch and
`RagTokenForGeneration` or `torch.load(path)` on another, or a `train(model,
...)` whose callers pass something else) is not flagged, nor a forward whose
flag the run chooses (`model(ids, args.train)`), a sum that starts from 0
(`loss = 0; loss += ...` over chunks), or a count with a ceiling
(`torch.clamp(n, max=cap)`) or compared with the batch size. A mean loss that is not
divided at all is TL003's.

## Fix safety

No fix: the repair needs the number of real tokens in the whole window
before its first backward (or a rescaling of the gradients at its end),
which the loop does not compute. The message says what to sum and what to
divide by.
"""

from __future__ import annotations

import ast
import functools
from typing import FrozenSet, Iterator, List, Mapping, Optional, Tuple

import libcst as cst

from torchlint.context import FileContext
from torchlint.flow.scopes import parameter_names
from torchlint.model import ERROR
from torchlint.names import ModuleNames, dotted_name, int_value, keyword, last_component, positional
from torchlint.rules import Example, Finding, Rule
from torchlint.training import AccumulationCheck, StepSite, TrainingLoop
from torchlint.training.forward import (
    Forward, built_classes, model_forwards, passed_as_itself, returned_part, spread_keywords,
)
from torchlint.training.frameworks import backward_scaling
from torchlint.training.graph import FACTORIES
from torchlint.training.origin import Division, reduction
from torchlint.training.tokens import fixed_token_count, same_every_micro_batch
from torchlint.walk import children

_TOKEN_LOSSES = frozenset({"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"})
# Hugging Face models whose `loss` is a mean over the labelled tokens (labels of -100 do not count).
_LANGUAGE_MODELS = ("ForCausalLM", "LMHeadModel", "ForSeq2SeqLM", "ForMaskedLM", "ForConditionalGeneration",
                    "DoubleHeadsModel", "ForTokenClassification")
# The keywords a Hugging Face language model takes its token labels by (`lm_labels`: transformers 2.x).
_LABEL_KEYWORDS = ("labels", "lm_labels", "masked_lm_labels")
# Methods that compare a tensor with their argument.
_READS = frozenset({"ne", "eq", "lt", "le", "gt", "ge", "not_equal", "equal", "isin"})
_PADDING_COLLATORS = frozenset({
    "transformers.DataCollatorForSeq2Seq", "transformers.DataCollatorForLanguageModeling",
    "transformers.DataCollatorForTokenClassification", "transformers.data.data_collator.DataCollatorForSeq2Seq",
    "transformers.data.data_collator.DataCollatorForLanguageModeling",
    "transformers.data.data_collator.DataCollatorForTokenClassification", "trl.DataCollatorForCompletionOnlyLM",
})
_COUNTS = frozenset({"sum", "count_nonzero"})
_FLATTENING = frozenset({"view", "reshape", "flatten"})
_PASSING = frozenset({"float", "to", "cuda", "double", "half", "squeeze", "clone", "contiguous", "clamp",
                      "clamp_min"})
_MAX_DEPTH = 20
# Calls that keep a count from falling below a floor: `torch.max(n, torch.tensor(1))`, `torch.clamp(n, min=1)`.
_FLOORS = frozenset({"torch.max", "torch.maximum", "torch.clamp", "torch.clamp_min"})
# Methods whose result is the receiver's mask, in another shape, type or place.
_MASK_KEEPING = frozenset({"view", "reshape", "flatten", "unsqueeze", "squeeze", "to", "cuda", "bool", "byte",
                           "expand", "expand_as", "contiguous", "detach", "logical_not"})
# Methods whose result holds the receiver's positions, in another shape, type or place (`ids.view(-1)`).
_POSITIONS_KEEPING = frozenset({"view", "reshape", "flatten", "squeeze", "contiguous", "to", "cuda", "long", "detach"})


class TokenMeanUnderAccumulation(Rule):
    code = "TL017"
    name = "token-mean-under-accumulation"
    severity = ERROR
    summary = "a mean over each micro-batch's tokens divided by the accumulation count"

    def check(self, context: FileContext) -> Iterator[Finding]:
        for loop in context.loops:
            reported = set()
            for step in loop.optimizer_steps:
                check = loop.accumulation_check(step)
                if check is None or loop.gradients_normalised(step) is not None:
                    continue  # no window, or one normalised by hand (TL003's)
                for backward in loop.accumulated_backwards(step, check):
                    if backward.loss is None or loop.in_accumulate_context(backward):
                        continue
                    scaling = backward_scaling(backward, context.names)
                    for division in loop.divisions(backward.loss, backward):
                        if id(division.node) in reported or not loop.same_count(division.divisor, check.count):
                            continue
                        if scaling is not None and scaling.divides_by(loop, division.divisor):
                            continue  # the framework divides by it again: TL013's
                        how = _token_mean(context, loop, division.dividend, division.at)
                        if how is None:
                            continue
                        reported.add(id(division.node))
                        yield self._finding(context, loop, step, check, division, how)

    @staticmethod
    def _finding(context: FileContext, loop: TrainingLoop, step: StepSite, check: AccumulationCheck,
                 division: Division, how: str) -> Finding:
        loss, count = context.code(division.dividend), context.code(division.divisor)
        message = (
            f"`{loss}` {'holds' if how.startswith('its term') else 'is'} a mean over its micro-batch's real tokens "
            f"({how}), and dividing it by `{count}` gives "
            f"every micro-batch the same weight whatever its number of tokens: tokens of short micro-batches "
            f"count more than those of long ones, so `{step.receiver}.step()` does not apply the window's token "
            f"mean. Sum the loss over tokens (`reduction='sum'`) and divide by the window's token count."
        )
        return Finding(division.node, message, timeline=_timeline(loop, step, check))

    valid = (
        # Image classes: a mean over a fixed number of samples, not of tokens.
        """
import torch.nn.functional as F
for i, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Summed over tokens and divided by the window's token count: the large batch's token mean.
        """
import torch.nn.functional as F
for i, (x, y, window_tokens) in enumerate(loader):
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum")
    (loss / window_tokens).backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Token-count normalisation: weighted by its count, gradients divided by the window's.
        """
import torch.nn.functional as F
tokens = 0
for i, (x, y) in enumerate(loader):
    n = (y != -100).sum()
    tokens += n
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-100)
    (loss * n).backward()
    if (i + 1) % accum == 0:
        for p in model.parameters():
            p.grad.div_(tokens)
        optimizer.step()
        optimizer.zero_grad()
        tokens = 0
""",
    )
    invalid = (
        Example(
            """
import torch.nn.functional as F
for i, batch in enumerate(loader):
    logits = model(batch["input_ids"])
    loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
    loss = loss / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=6,
        ),
        # A masked mean.
        Example(
            """
for step, (x, y, mask) in enumerate(loader):
    per_token = criterion(model(x), y)
    loss = (per_token * mask).sum() / mask.sum()
    (loss / grad_accum).backward()
    if (step + 1) % grad_accum == 0:
        opt.step()
        opt.zero_grad()
""",
            line=5,
        ),
        # A causal language model's loss, on labels a collator pads with -100.
        Example(
            """
from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq
model = AutoModelForCausalLM.from_pretrained(name)
collator = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)
for step, batch in enumerate(loader):
    outputs = model(**batch)
    loss = outputs.loss
    loss /= args.gradient_accumulation_steps
    loss.backward()
    if (step + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=8,
        ),
    )


def _token_mean(context: FileContext, loop: TrainingLoop, node: cst.BaseExpression, at: int,
                depth: int = 0, slot: Tuple[int, ...] = ()) -> Optional[str]:
    """How `node` is a mean over a varying number of tokens, quoted for the message; None when the
    code does not show it. A name must be one on every path that reaches `at`. `slot`: the element of
    `node`'s value that is read (`outputs[0]`, `loss, logits = model(...)`).

    `context` and `loop` may also be a `Forward`: the `forward` of a model the loop calls, read there."""
    if depth > _MAX_DEPTH:
        return None
    names = context.names
    if slot and isinstance(node, (cst.Tuple, cst.List, cst.BinaryOperation)):  # `(loss,) + outputs`
        part = returned_part(node, slot)
        return None if part is None else _token_mean(context, loop, part, at, depth + 1)
    if isinstance(node, cst.Subscript):
        index = _index(node)
        return None if index is None else _token_mean(context, loop, node.value, at, depth + 1, (index,) + slot)
    if isinstance(node, cst.Call):
        spread = spread_keywords(node, loop, at)
        forwards = model_forwards(node, names, loop.functions, loop.function, spread, at)
        if forwards is not None:
            return _returned_token_mean(forwards, slot, depth)
        if slot:
            return _language_model_loss(context, loop, node, at, slot, spread)
        func = node.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "mean" and not node.args and not _masked(loop, func.value, at):
                # `loss.mean()` of the losses `DataParallel` gathers: a mean of the replicas' token means
                return _token_mean(context, loop, func.value, at, depth + 1)
            if func.attr.value in _PASSING:
                return _token_mean(context, loop, func.value, at, depth + 1)
            if func.attr.value == "mean" and _masked(loop, func.value, at):
                return f"`{context.code(node)}`"
        how = _masked_criterion(context, loop, node, at)
        if how is not None:
            return how
        how = _ignoring_criterion(context, node, names)
        if how is None or not _over_sequences(loop, node, at):
            return None
        # Targets cut at a fixed length from one packed stream: as many tokens in every micro-batch.
        return None if fixed_token_count(loop, positional(node, 1) or keyword(node, "target"), at) else how
    if isinstance(node, cst.BinaryOperation) and not slot:
        return _combined(context, loop, node, at, depth)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and not slot:
        return _token_mean(context, loop, node.expression, at, depth + 1)
    if isinstance(node, cst.Attribute) and node.attr.value == "loss" and not slot:
        model = _language_model(loop, node.value, at, names)
        padded = _padded_labels(context, names) if model is not None else None
        return f"`{context.code(node)}` of `{model}`, on labels {padded}" if padded is not None else None
    name = dotted_name(node)
    if name is None:
        return None
    definitions = loop.reaching(name, at)
    found = []
    added_to = []  # `loss += aux`, `loss = loss + aux`: the name's earlier value, with terms added
    for definition in definitions:
        if not slot and definition.kind == "augmented" and definition.operator in ("+=", "-="):
            added_to.append(definition)
            continue
        if definition.kind != "assign" or definition.value is None:
            return None
        if not slot and _times_zero(definition.value):
            continue  # `loss = logits.mean() * 0` when the micro-batch has no token to predict: no gradient
        if not slot and _adds_to_itself(definition.value, name):
            added_to.append(definition)
            continue
        part = slot
        if definition.unpacked:
            if not isinstance(definition.value, cst.Call) or not definition.position:
                return None
            part = tuple(definition.position) + slot
        how = _token_mean(context, loop, definition.value, definition.node, depth + 1, part)
        if how is None:
            return None
        found.append(how)
    if found or not added_to:
        # with other values, the token mean's part stays what they make it, whatever the extra terms are
        return found[0] if found else None
    # added to on every path: a token mean if the value before the addition is one (the sum keeps its part)
    befores = [_token_mean(context, loop, node, definition.node, depth + 1) for definition in added_to]
    return befores[0] if all(how is not None for how in befores) else None


def _combined(context: FileContext, loop: TrainingLoop, node: cst.BinaryOperation, at: int,
              depth: int) -> Optional[str]:
    """A masked mean spelled out (`(loss * mask).sum() / mask.sum()`), or a token mean kept by the arithmetic
    around it: scaled by a factor that is the same on every micro-batch (`lm_loss * args.lm_coef`,
    `(start_loss + end_loss) / 2`), or summed with other terms (`lm_loss + mc_loss`: the token mean's part of
    the gradient is weighed by micro-batch whatever the other terms are). A factor of the micro-batch's own
    (`loss * n_tokens`) is not a coefficient: that is token-count weighting."""
    operator = node.operator
    if isinstance(operator, cst.Divide):
        if _summed(node.left, loop.names) and _mask_count(loop, node.right, at, depth):
            whole = context.code(node)
            return f"`{whole}`" if _short(whole) else f"`(...).sum() / {context.quote(node.right)}`"
        if same_every_micro_batch(loop, node.right, at):
            return _token_mean(context, loop, node.left, at, depth + 1)
        return None
    if isinstance(operator, cst.Multiply):
        for factor, other in ((node.right, node.left), (node.left, node.right)):
            if same_every_micro_batch(loop, factor, at):
                return _token_mean(context, loop, other, at, depth + 1)
        return None
    if isinstance(operator, (cst.Add, cst.Subtract)):
        for term in (node.left, node.right):
            how = _token_mean(context, loop, term, at, depth + 1)
            if how is not None:
                if how.startswith("its term"):
                    return how  # the innermost term is named
                code = context.code(term)
                return f"its term `{code}`: {how}" if _short(code) else f"its term {how}"
    return None


def _times_zero(value: cst.BaseExpression) -> bool:
    """`x * 0`, `0 * x`: a value that contributes nothing to the gradient, whatever `x` is."""
    return isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply) and any(
        isinstance(side, (cst.Integer, cst.Float)) and float(side.value) == 0 for side in (value.left, value.right))


def _adds_to_itself(value: cst.BaseExpression, name: str) -> bool:
    """`loss + aux * w` assigned back to `loss`: the name's value with other terms added."""
    return isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)) and (
        dotted_name(value.left) == name or (isinstance(value.operator, cst.Add) and dotted_name(value.right) == name))


def _short(code: str) -> bool:
    """Code short enough to quote whole in a message."""
    return "\n" not in code and len(code) <= 60


def _language_model_loss(context: FileContext, loop: TrainingLoop, call: cst.Call, at: int, slot: Tuple[int, ...],
                         spread: Mapping[str, cst.BaseExpression]) -> Optional[str]:
    """`loss, logits = model(ids, labels=labels)`, `model(**batch)[0]`, `lm_loss, mc_loss, *_ = model(...,
    lm_labels=...)`: the first element of a Hugging Face language model's outputs when the call gives it labels
    is its token-mean loss; a token mean over a varying count where the file pads or masks the labels (a
    collator, or -100 written into them by hand). Not given labels, the first element is the logits."""
    if slot != (0,) or not isinstance(context, FileContext):
        return None
    labels = None
    for label in _LABEL_KEYWORDS:
        value = keyword(call, label)
        if value is None and not any(arg.keyword is not None and arg.keyword.value == label for arg in call.args):
            value = spread.get(label)
        if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
            labels = label
            break
    if labels is None:
        return None
    model = _language_model(loop, call, at, context.names)
    padded = _padded_labels(context, context.names) if model is not None else None
    return f"the loss `{model}(..., {labels}=...)` returns first, on labels {padded}" if padded is not None else None


def _padded_labels(context: FileContext, names: ModuleNames) -> Optional[str]:
    """Who pads the labels of the file's language models so that their loss leaves tokens out, quoted for the
    message: a collator the file imports, or the file itself writing -100 (`_writes_ignored_label`); None when
    the code shows neither."""
    if any(origin in _PADDING_COLLATORS for origin in names.aliases.values()):
        return "a collator pads"
    if isinstance(context, FileContext) and _writes_ignored_label(context.source):
        return "the file pads with -100"
    return None


@functools.lru_cache(maxsize=8)  # asked for each loss of the file's loops: CPython parses the file once
def _writes_ignored_label(source: str) -> bool:
    """The file writes -100 (the label a Hugging Face model's loss ignores) into data: in a list it builds
    (`[-100] * n`, `x + [pad if name != "labels" else -100] * (max_l - len(x))`), into a tensor's elements
    (`labels[labels == pad] = -100`, `labels.masked_fill(mask, -100)`, `torch.where(keep, labels, -100)`), or as
    a padding value (`pad_sequence(..., padding_value=-100)`, `label_pad_token_id=-100`, `torch.full_like(x,
    -100)`). Reading it (`labels != -100`), a criterion's `ignore_index=-100`, a parameter's default or another
    use (`x.clamp(-100, 100)`) writes no label."""
    if "-100" not in source:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    written = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.List):
            written.update(id(element) for element in node.elts)
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            written.add(id(node.elt))
        elif isinstance(node, ast.IfExp):  # `[pad if name != "labels" else -100]`: as the expression it is in
            if id(node) in written:
                written.update((id(node.body), id(node.orelse)))
        elif isinstance(node, ast.Assign) and any(isinstance(target, ast.Subscript) for target in node.targets):
            written.add(id(node.value))
        elif isinstance(node, ast.keyword) and node.arg is not None and node.arg != "ignore_index" \
                and ("pad" in node.arg or node.arg in ("value", "fill_value")):
            written.add(id(node.value))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                node.func.id if isinstance(node.func, ast.Name) else None
            filled = {"masked_fill": 1, "masked_fill_": 1, "full_like": 1, "where": 2, "pad": 2}.get(name or "")
            if filled is not None and len(node.args) > filled:
                written.add(id(node.args[filled]))
    return any(id(node) in written and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
               and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int
               and node.operand.value == 100 for node in ast.walk(tree))


def _returned_token_mean(forwards: List[Forward], slot: Tuple[int, ...], depth: int) -> Optional[str]:
    """What each `forward` returns (the `slot` element of it) is a token mean on every path the call takes."""
    found = []
    for forward in forwards:
        returns = forward.returns()
        if not returns:
            return None
        for value, node in returns:
            how = _token_mean(forward, forward, value, node, depth + 1, slot)
            if how is None:
                return None
            found.append(f"{how} in {forward.where}")
    return found[0] if found else None


def _index(node: cst.Subscript) -> Optional[int]:
    """`k` of `outputs[k]`, a whole number."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    return int(value.value) if isinstance(value, cst.Integer) and value.value.isdigit() else None


def _ignoring_criterion(context: FileContext, call: cst.Call, names: ModuleNames) -> Optional[str]:
    """`F.cross_entropy(..., ignore_index=i)`, or a call of `nn.CrossEntropyLoss(ignore_index=i)`, mean-reduced."""
    qualified = names.callee(call)
    if qualified is not None and names.is_loss_function(qualified):
        if last_component(qualified) in _TOKEN_LOSSES and keyword(call, "ignore_index") is not None \
                and reduction(call) == "mean":
            return f"`{dotted_name(call.func)}(..., ignore_index={context.code(keyword(call, 'ignore_index'))})`"
        return None
    constructors = [call.func] if isinstance(call.func, cst.Call) else \
        names.values_of(dotted_name(call.func) or "") if dotted_name(call.func) else []
    built = [c for c in constructors if isinstance(c, cst.Call)]
    if not built or len(built) != len(constructors):
        return None
    for constructor in built:
        callee = names.callee(constructor)
        if callee is None or not names.is_loss_class(callee) or last_component(callee) not in _TOKEN_LOSSES \
                or keyword(constructor, "ignore_index") is None or reduction(constructor) != "mean":
            return None
    ignored = context.code(keyword(built[0], "ignore_index"))
    return f"`{dotted_name(call.func) or context.code(call.func)}`, built with `ignore_index={ignored}`"


def _over_sequences(loop: TrainingLoop, call: cst.Call, at: int) -> bool:
    """The criterion scores tokens of a batch of sequences: its input or target is flattened
    (`logits.view(-1, vocab)`, `labels.flatten()`, `shift_labels.reshape(-1)`), directly or through a
    name given that on every path. A segmentation loss over `(N, C, H, W)` maps is not."""
    arguments = [arg.value for arg in call.args[:2]]
    return any(_flattened(loop, argument, at) for argument in arguments)


def _flattened(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int = 0) -> bool:
    if isinstance(node, cst.Subscript):  # the active tokens of a flattened batch: `logits.view(-1, n)[active]`
        return _flattened(loop, node.value, at, depth + 1)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value in _FLATTENING
    name = dotted_name(node)
    if name is None or depth > 2:
        return False
    definitions = loop.reaching(name, at)
    return bool(definitions) and all(
        d.kind == "assign" and not d.unpacked and d.value is not None and _flattened(loop, d.value, d.node, depth + 1)
        for d in definitions)


def _masked(loop: TrainingLoop, node: cst.BaseExpression, at: int) -> bool:
    """`x.masked_select(mask)` / `torch.masked_select(x, mask)` of a mask taken from the micro-batch's data
    (`_data_mask`)."""
    if not isinstance(node, cst.Call) or loop.names is None:
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "masked_select" and loop.names.callee(node) is None:
        mask = positional(node, 0) or keyword(node, "mask")
    elif loop.names.callee(node) == "torch.masked_select":
        mask = positional(node, 1) or keyword(node, "mask")
    else:
        return False
    return mask is not None and _data_mask(loop, mask, at, 0)


def _masked_criterion(context: FileContext, loop: TrainingLoop, call: cst.Call, at: int) -> Optional[str]:
    """A mean-reduced criterion over the elements a mask of the micro-batch selects: `F.l1_loss(x[mask], y[mask])`,
    `self.criterion(outs.masked_select(mask), ys.masked_select(mask))` of `self.criterion = nn.L1Loss()`,
    `loss_fct(logits.view(-1, n)[active], labels.view(-1)[active])`: a mean over as many elements as the mask
    holds, which varies with the micro-batch's padding."""
    names = loop.names
    if names is None:
        return None
    qualified = names.callee(call)
    if qualified is not None:
        if not names.is_loss_function(qualified) or reduction(call) != "mean":
            return None
    else:
        constructors = [call.func] if isinstance(call.func, cst.Call) else \
            names.values_of(dotted_name(call.func) or "") if dotted_name(call.func) else []
        if not constructors or not all(
                isinstance(c, cst.Call) and names.callee(c) is not None and names.is_loss_class(names.callee(c))
                and reduction(c) == "mean" for c in constructors):
            return None
    for argument in (positional(call, 0) or keyword(call, "input"), positional(call, 1) or keyword(call, "target")):
        if argument is not None and _selected(loop, argument, at, 0):
            return f"`{dotted_name(call.func) or context.code(call.func)}` over the elements a mask selects"
    return None


def _selected(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int) -> bool:
    """`node` holds the elements a mask of the micro-batch selects, on every path: `x.masked_select(mask)`,
    `x[mask]`, `x.view(-1, n)[active]`, through conversions and names."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(node, cst.Subscript):
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            # `x[t]` of a loop's index or of a tensor of indices is no mask: the mask must be shown as one, or the
            # indices as the positions of one (`x[torch.nonzero(mask).view(-1)]`)
            index = node.slice[0].slice.value
            return _data_mask(loop, index, at, depth + 1, shown=True) or _mask_positions(loop, index, at, depth + 1)
        return False
    if isinstance(node, cst.Call):
        if _masked(loop, node, at):
            return True
        func = node.func
        return isinstance(func, cst.Attribute) and func.attr.value in _PASSING and loop.names.callee(node) is None \
            and _selected(loop, func.value, at, depth + 1)
    return _every_assignment(loop, node, at, depth, _selected)


def _mask_positions(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int) -> bool:
    """`node` holds the positions of the true elements of a mask of the micro-batch (`_data_mask`, shown as one):
    `torch.nonzero(mask)`, `mask.nonzero()`, `torch.argwhere(mask)`, `torch.where(mask)[0]`,
    `torch.nonzero(mask, as_tuple=True)[0]`, in any shape (`.view(-1)`, `.squeeze(-1)`), or a name given such
    positions on every path. Indexing with them selects as many elements as the mask holds."""
    if depth > _MAX_DEPTH:
        return False
    depth += 1
    if isinstance(node, cst.Subscript):  # `torch.where(mask)[0]`: the positions along the first dimension
        element = node.slice[0].slice if len(node.slice) == 1 else None
        return isinstance(element, cst.Index) and int_value(element.value) == 0 \
            and _positions_of_mask(loop, node.value, at, depth, tupled=True)
    if isinstance(node, cst.Call):
        if _positions_of_mask(loop, node, at, depth, tupled=False):
            return True
        func = node.func
        return isinstance(func, cst.Attribute) and func.attr.value in _POSITIONS_KEEPING \
            and loop.names.callee(node) is None and _mask_positions(loop, func.value, at, depth)
    return _every_assignment(loop, node, at, depth, _mask_positions)


def _positions_of_mask(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int, tupled: bool) -> bool:
    """`node` is a call giving the positions of a mask of the micro-batch: as a tensor (`torch.nonzero(mask)`,
    `mask.nonzero()`, `torch.argwhere(mask)`), or with `tupled` as a tuple of them per dimension
    (`torch.where(mask)`, `torch.nonzero(mask, as_tuple=True)`)."""
    if not isinstance(node, cst.Call):
        return False
    qualified = loop.names.callee(node)
    func = node.func
    as_tuple = keyword(node, "as_tuple")
    if as_tuple is not None and not (isinstance(as_tuple, cst.Name) and as_tuple.value in ("True", "False")):
        return False  # a tuple or a tensor, as the run decides
    tuple_asked = as_tuple is not None and as_tuple.value == "True"
    if qualified in ("torch.nonzero", "torch.argwhere"):
        mask = positional(node, 0) or keyword(node, "input")
        gives_tuple = tuple_asked
    elif qualified == "torch.where" and len(node.args) == 1:
        mask, gives_tuple = positional(node, 0), True
    elif qualified is None and isinstance(func, cst.Attribute) and func.attr.value == "nonzero":
        mask, gives_tuple = func.value, tuple_asked
    else:
        return False
    return gives_tuple == tupled and mask is not None and _data_mask(loop, mask, at, depth, shown=True)


def _data_mask(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int, shown: bool = False) -> bool:
    """A boolean mask whose count of true elements is the micro-batch's own: a comparison of its data
    (`attention_mask.view(-1) == 1`, `labels != pad_id`, `positions < lengths[:, None]`), a mask that comes with
    it (`for x, y, mask in loader`, a parameter of the model's `forward`), and what keeps one (`.view(...)`,
    `.unsqueeze(-1)`, `~mask`, `mask & other`). A mask made of constant shapes (`torch.ones(b, t).bool()`,
    `torch.rand(b, t) < 0.15`, a mask set before the loop) is not: its count does not follow the data.
    `shown`: the code must show a boolean mask (a comparison, `~`, `&`): a tensor of the loader or a parameter
    may be indices (`targets[t]`)."""
    if depth > _MAX_DEPTH:
        return False
    depth += 1
    if isinstance(node, cst.Comparison):
        return any(_from_data(loop, part, at, depth)
                   for part in [node.left, *(target.comparator for target in node.comparisons)])
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
        return _data_mask(loop, node.expression, at, depth, shown)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr)):
        return _data_mask(loop, node.left, at, depth, shown) or _data_mask(loop, node.right, at, depth, shown)
    if isinstance(node, cst.Call):
        func = node.func
        if loop.names.callee(node) in ("torch.tensor", "torch.as_tensor"):  # `torch.tensor(labels == 2, dtype=...)`
            data = positional(node, 0)
            return data is not None and _data_mask(loop, data, at, depth, shown)
        if not isinstance(func, cst.Attribute) or loop.names.callee(node) is not None:
            return False
        if func.attr.value in _MASK_KEEPING:
            return _data_mask(loop, func.value, at, depth, shown and func.attr.value not in ("bool", "logical_not"))
        if func.attr.value in _READS:
            return any(_from_data(loop, part, at, depth) for part in [func.value, *(arg.value for arg in node.args)])
        return False
    if isinstance(node, cst.Subscript):  # `mask[:, 1:]`, `batch["attention_mask"]`
        if _sliced(node):
            return _data_mask(loop, node.value, at, depth, shown)
        return not shown and _from_data(loop, node, at, depth)
    name = dotted_name(node)
    if name is None:
        return False
    definitions = loop.reaching(name, at)
    iteration = loop.iteration
    region = frozenset(iteration.region.body) if iteration is not None else None
    if shown and any(d.kind != "assign" or d.unpacked for d in definitions):
        return False
    test = (lambda *args: _data_mask(*args, shown=True)) if shown else _data_mask
    return bool(definitions) and all(_data_definition(loop, d, region, depth, test) for d in definitions)


def _sliced(node: cst.Subscript) -> bool:
    """`x[:, 1:]`, `x[..., :-1]`: slices only, which keep a mask a mask."""
    return all(isinstance(element.slice, cst.Slice)
               or (isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Ellipsis))
               for element in node.slice)


def _from_data(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int) -> bool:
    """`node` is computed from the micro-batch's data: it reads a name the iteration takes from its loader
    (the loop's target, what is unpacked from it), a parameter of the model's `forward` (its inputs), or a
    name given such a value on every path. What tensor factories build (`torch.ones(x.shape)`) is not."""
    if depth > _MAX_DEPTH:
        return False
    depth += 1
    roots = _data_roots(loop, node)
    if not roots:
        return False
    iteration = loop.iteration
    region = frozenset(iteration.region.body) if iteration is not None else None
    for root in roots:
        definitions = loop.reaching(root, at)
        if definitions and all(_data_definition(loop, d, region, depth, _from_data) for d in definitions):
            return True
    return False


def _data_definition(loop: TrainingLoop, definition, region: Optional[FrozenSet[int]], depth: int,
                     value_test) -> bool:
    """The name `definition` binds holds the micro-batch's data (a mask of it, for `value_test=_data_mask`)."""
    if region is None:  # a model's `forward`: its parameters are what the call passes, the batch
        if definition.kind == "parameter":
            return definition.name != "self"
    elif definition.node not in region:
        return False  # set before the loop: the same on every micro-batch
    elif definition.kind == "target":
        return True  # `for x, y, mask in loader`
    if definition.kind != "assign" or definition.value is None:
        return False
    if definition.unpacked:  # `x, y, mask = batch`
        return _from_data(loop, definition.value, definition.node, depth)
    return value_test(loop, definition.value, definition.node, depth)


def _data_roots(loop: TrainingLoop, node: cst.BaseExpression) -> List[str]:
    """The names `node` reads, outside the arguments of tensor factories (`torch.ones(x.shape)`: only a shape)."""
    roots: List[str] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            callee = loop.names.callee(current)
            if callee is not None and callee.startswith("torch.") and last_component(callee) in FACTORIES:
                continue
        if isinstance(current, cst.Name):
            roots.append(current.value)
            continue
        if isinstance(current, cst.Attribute):
            name = dotted_name(current)
            if name is not None:
                roots.append(name.split(".", 1)[0])
                continue
        if isinstance(current, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
            continue
        stack.extend(children(current))
    return roots


def _summed(node: cst.BaseExpression, names: ModuleNames) -> bool:
    """`(...).sum()` or `torch.sum(...)`, over every element (`x.sum(1)`: a sum per sample, not of the batch)."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "sum" and names.callee(node) is None:
        return _whole(node, 0)
    return names.callee(node) == "torch.sum" and _whole(node, 1)


def _whole(call: cst.Call, positional_dim: int) -> bool:
    """A reduction given no dimension: over every element."""
    return positional(call, positional_dim) is None and keyword(call, "dim") is None and keyword(call, "axis") is None


def _mask_count(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int) -> bool:
    """A count taken from this micro-batch's mask: `mask.sum()`, `(labels != -100).sum()`,
    `torch.count_nonzero(mask)`, `mask.sum().clamp(min=1)`, kept from zero by a constant floor
    (`torch.max(mask.sum(), torch.tensor(1))`, `torch.clamp(n, min=1)`, `max(n, 1)`), or a name given one on
    every path."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(node, cst.Call):
        func = node.func
        qualified = loop.names.callee(node) if loop.names is not None else None
        if isinstance(func, cst.Attribute) and qualified is None:
            if func.attr.value in _COUNTS:
                return _whole(node, 0)  # `mask.sum(1)`: a count per sample
            if func.attr.value in _PASSING:
                return _mask_count(loop, func.value, at, depth + 1)
        if qualified in _FLOORS or (qualified is None and dotted_name(func) == "max" and len(node.args) == 2):
            return _floored_count(loop, node, at, depth)
        selection = _counted_selection(node)
        if selection is not None:
            return _selected(loop, selection, at, depth + 1)
        return qualified in ("torch.sum", "torch.count_nonzero") and _whole(node, 1)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape" \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and int_value(node.slice[0].slice.value) == 0:
        return _selected(loop, node.value.value, at, depth + 1)  # `x.shape[0]` of the selected elements
    return _every_assignment(loop, node, at, depth, _mask_count)


def _counted_selection(call: cst.Call) -> Optional[cst.BaseExpression]:
    """`x` of `len(x)`, `x.numel()`, `x.size(0)`: how many elements (or rows) `x` holds, which is the micro-batch's
    token count when `x` holds the elements a mask selects."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "len" and len(call.args) == 1 and not call.args[0].star:
        return call.args[0].value
    if isinstance(func, cst.Attribute) and func.attr.value == "numel" and not call.args:
        return func.value
    if isinstance(func, cst.Attribute) and func.attr.value == "size" and len(call.args) == 1 \
            and int_value(call.args[0].value) == 0:
        return func.value
    return None


def _floored_count(loop: TrainingLoop, call: cst.Call, at: int, depth: int) -> bool:
    """`torch.max(count, floor)`, `torch.clamp(count, min=floor)`, `max(count, floor)`: the count, unless it is
    below a floor that is the same on every micro-batch (a micro-batch with no token to count)."""
    values = [arg.value for arg in call.args if arg.star == ""]
    if len(values) != 2 or len(values) != len(call.args):
        return False
    counts = [value for value in values if _mask_count(loop, value, at, depth + 1)]
    if len(counts) != 1:
        return False
    floor = values[1] if counts[0] is values[0] else values[0]
    if any(arg.keyword is not None and arg.keyword.value not in ("min", "other") for arg in call.args):
        return False  # `torch.clamp(n, max=c)`: a ceiling; `torch.max(n, dim=0)`: a reduction
    while isinstance(floor, cst.Call) and isinstance(floor.func, cst.Attribute) and floor.func.attr.value in _PASSING:
        floor = floor.func.value  # `torch.tensor(1).to(device)`
    if isinstance(floor, cst.Call) and loop.names.callee(floor) in ("torch.tensor", "torch.as_tensor") \
            and len(floor.args) == 1:
        floor = floor.args[0].value
    return same_every_micro_batch(loop, floor, at)


def _language_model(loop: TrainingLoop, outputs: cst.BaseExpression, at: int, names: ModuleNames) -> Optional[str]:
    """`model` when `outputs` is `model(...)` (directly or through a name) and `model` is a Hugging Face
    language model built in the file (`AutoModelForCausalLM.from_pretrained(...)`, `GPT2LMHeadModel(...)`):
    every binding of the name builds one, or wraps or moves one (`DataParallel(model)`, `model.to(device)`).
    One that builds something else (`RagTokenForGeneration`, whose loss may be a sum; a model loaded whole)
    leaves it unknown, as does a parameter the file's callers do not pass by that very name."""
    calls = [outputs] if isinstance(outputs, cst.Call) else []
    name = dotted_name(outputs)
    if name is not None:
        definitions = loop.reaching(name, at)
        calls = [d.value for d in definitions if d.kind == "assign" and not d.unpacked]
        if len(calls) != len(definitions):
            return None
    models = {dotted_name(call.func) for call in calls if isinstance(call, cst.Call)}
    if len(models) != 1 or None in models or len(calls) != len([c for c in calls if isinstance(c, cst.Call)]):
        return None
    (model,) = models
    function, functions = getattr(loop, "function", None), getattr(loop, "functions", None)
    if function is not None and model in parameter_names(function.params) and (
            functions is None or not passed_as_itself(function, model, functions)):
        return None
    classes = built_classes(names, model, 0, set())
    if not classes or not all(_language_model_class(built, names, 0) for built in classes):
        return None
    return model


def _language_model_class(node: cst.BaseExpression, names: ModuleNames, depth: int) -> bool:
    """`node` names a Hugging Face language-model class: directly, or through a name every binding of which is
    one (`model_class = GPT2DoubleHeadsModel if "gpt2" in name else OpenAIGPTDoubleHeadsModel`)."""
    if depth > 3:
        return False
    if isinstance(node, cst.IfExp):
        return _language_model_class(node.body, names, depth + 1) \
            and _language_model_class(node.orelse, names, depth + 1)
    qualified = names.qualify(node)
    if qualified is not None:
        return qualified.startswith("transformers.") and last_component(qualified).endswith(_LANGUAGE_MODELS)
    name = dotted_name(node)
    bindings = names.bindings.get(name, ()) if name is not None else ()
    return bool(bindings) and all(binding.index is None and _language_model_class(binding.value, names, depth + 1)
                                  for binding in bindings)


def _timeline(loop: TrainingLoop, step: StepSite, check: AccumulationCheck) -> Optional[str]:
    run = loop.run_of(step, check)
    if run is None or not run.steps:
        return None
    return run.lines(f"each micro-batch's summed loss divided by its window's token count, so each step applies "
                     f"the window's token mean (divided by {run.count}: every micro-batch weighs 1/{run.count} of "
                     f"it, whatever its tokens)")


def _every_assignment(loop: TrainingLoop, node: cst.BaseExpression, at: int, depth: int, test) -> bool:
    """`node` is a name whose every definition reaching `at` is a plain assignment of a value that passes `test`
    (`test(loop, value, its node, depth + 1)`)."""
    name = dotted_name(node)
    if name is None:
        return False
    definitions = loop.reaching(name, at)
    return bool(definitions) and all(
        d.kind == "assign" and not d.unpacked and d.value is not None and test(loop, d.value, d.node, depth + 1)
        for d in definitions)
