"""`training.tokens`: targets cut at a fixed length from one packed stream hold as many tokens every micro-batch."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.names import ModuleNames
from torchlint.training.loop import find_training_loops
from torchlint.training.tokens import fixed_token_count, same_every_micro_batch

_LOOP = """
import torch
import torch.nn.functional as F
{before}
def train(model, data, labels, block, accum):
    for step in range(1000):
{body}
        loss = F.cross_entropy(model(x).view(-1, 50257), y.view(-1), ignore_index=-1)
        (loss / accum).backward()
        if (step + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
"""


def _fixed(body: str, before: str = "") -> bool:
    source = _LOOP.format(before=textwrap.dedent(before), body=textwrap.indent(textwrap.dedent(body), " " * 8))
    module = cst.parse_module(source)
    (loop,) = find_training_loops(module, ModuleNames(module))
    (assignment,) = [a for a in loop.assignments if a.target == "loss"]
    return fixed_token_count(loop, assignment.value.args[1].value, assignment.point[0])


@pytest.mark.parametrize("body", [
    "x = data[step * block:step * block + block]\ny = data[step * block + 1:step * block + 1 + block]",
    "buf = data[step:step + block + 1]\nx, y = buf[:-1], buf[1:]",
    "ix = torch.randint(len(data) - block, (8,))\n"
    "x = torch.stack([data[i:i + block] for i in ix])\ny = torch.stack([data[i + 1:i + 1 + block] for i in ix])",
])
def test_targets_cut_at_a_fixed_length_beside_the_inputs_are_fixed(body):
    assert _fixed(body)


def test_a_function_of_the_file_that_returns_the_pair_is_followed():
    before = """
    def get_batch(data, i):
        x = data[i:i + 64]
        y = data[i + 1:i + 65]
        return x.cuda(), y.cuda()
    """
    assert _fixed("x, y = get_batch(data, step)", before)


@pytest.mark.parametrize("body", [
    "x = data[step:step + block]\ny = labels[step + 1:step + 1 + block]",  # a separate label stream
    "n = torch.randint(8, block, (1,)).item()\nx = data[step:step + n]\ny = data[step + 1:step + 1 + n]",
    "x = data[step:step + block]\ny = data[step + 1:step + 1 + block]\ny[y == 0] = -1",  # written in place
    "x, y = batch_of(step)",  # unknown
])
def test_varying_or_unknown_counts_are_not_fixed(body):
    assert not _fixed(body)


def test_a_length_taken_from_a_parameter_of_the_helper_is_unknown():
    before = """
    def get_batch(data, i, seq_len):
        x = data[i:i + seq_len]
        y = data[i + 1:i + 1 + seq_len]
        return x, y
    """
    assert not _fixed("x, y = get_batch(data, step, block)", before)


_COEFFICIENT = """
import torch
def train(model, loader, args, accum):
    coef = args.lm_coef
    for step, batch in enumerate(loader):
{body}
        loss = model(batch) * factor
        (loss / accum).backward()
        if (step + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
"""


@pytest.mark.parametrize("body, same", [
    ("factor = 0.5", True),
    ("factor = coef", True),  # set before the loop
    ("factor = args.lm_coef", True),  # an attribute of a name the loop does not bind
    ("factor = (batch[1] != -100).sum()", False),  # the micro-batch's token count
    ("factor = batch.n_tokens", False),  # an attribute of the micro-batch
    ("factor = coef if step else 1.0", False),  # a name the loop binds
])
def test_a_factor_the_same_on_every_micro_batch(body, same):
    module = cst.parse_module(_COEFFICIENT.format(body=textwrap.indent(body, " " * 8)))
    (loop,) = find_training_loops(module, ModuleNames(module))
    (assignment,) = [a for a in loop.assignments if a.target == "loss"]
    assert same_every_micro_batch(loop, assignment.value.right, assignment.point[0]) is same
