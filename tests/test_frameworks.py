"""The framework models' own answers (`torchlint.training.frameworks`), on small files read by hand."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.names import ModuleNames
from torchlint.training import find_training_loops
from torchlint.training.frameworks import Autograd


def _names(source: str) -> ModuleNames:
    return ModuleNames(cst.parse_module(textwrap.dedent(source)))


@pytest.mark.parametrize("imports, is_torch", [
    ("import torch\nimport numpy as np", True),
    ("from accelerate import Accelerator", True),
    ("from mxnet import autograd, gluon", False),
    ("from d2l import mxnet as d2l", False),
    ("import oneflow as torch", False),
    ("import paddle", False),
    ("import tensorflow as tf", False),
    ("import numpy as np", None),  # neither: a file handed its model and optimizer
    ("import torch\nfrom mxnet import autograd", None),  # both: each loop is judged by its own names
    ("import torch\nimport jax.numpy as jnp", None),
])
def test_autograd_of_a_file_is_read_from_its_imports(imports: str, is_torch) -> None:
    assert Autograd(_names(imports)).is_torch is is_torch


def test_a_file_importing_jax_for_data_keeps_its_pytorch_loops() -> None:
    """JAX has no `.backward()`: a loop that calls one is PyTorch's, whatever else the file imports."""
    autograd = Autograd(_names("import torch\nimport jax.numpy as jnp"))
    assert autograd.foreign(["jax.numpy.asarray"]) is None


def test_a_loop_of_a_mixed_file_belongs_to_the_framework_its_names_come_from() -> None:
    source = textwrap.dedent('''
        import torch
        from mxnet import autograd, gluon

        def train_gluon(net, data, batch_size):
            optimizer = gluon.Trainer(net.collect_params(), "sgd")
            for x, y in data:
                with autograd.record():
                    loss = net(x, y)
                loss.backward()
                optimizer.step(batch_size)

        def train_torch(model, data):
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in data:
                loss = model(x, y)
                loss.backward()
                optimizer.step()
    ''')
    module = cst.parse_module(source)
    loops = find_training_loops(module, ModuleNames(module))
    assert [loop.function.name.value for loop in loops] == ["train_torch"]


def test_a_file_of_another_framework_has_no_training_loops() -> None:
    source = "import oneflow as torch\nfor x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    opt.step()\n"
    module = cst.parse_module(source)
    assert find_training_loops(module, ModuleNames(module)) == []


_DEEPSPEED_ARGS = '''
import deepspeed
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
'''


@pytest.mark.parametrize("body, deepspeeds", [
    # DeepSpeed's flags on the parser, but the loop's own `loss.backward()` and optimizer: the loop's window.
    ("loss.backward()\n    if (i + 1) % args.gradient_accumulation_steps == 0:\n        optimizer.step()", False),
    # Accelerate hands the loss to DeepSpeed's engine, which steps at its own boundaries.
    ("accelerator.backward(loss)\n    if (i + 1) % args.deepspeed_config['gradient_accumulation_steps'] == 0:\n"
     "        optimizer.step()", True),
])
def test_deepspeed_owns_the_window_only_where_the_backward_is_the_engines(body: str, deepspeeds: bool) -> None:
    source = _DEEPSPEED_ARGS + "for i, batch in enumerate(loader):\n    loss = model(batch)\n    " + body + "\n"
    module = cst.parse_module(source)
    (loop,) = find_training_loops(module, ModuleNames(module))
    (step,) = loop.optimizer_steps
    assert bool(loop.accumulation_checks(step)) is not deepspeeds
