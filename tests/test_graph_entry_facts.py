"""Where a graph may enter what a backward goes through: what the loop passes a function it calls
(`TrainingLoop.call_graph_nodes`), and what a local holds when an iteration starts (`graph_brought_in`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.names import ModuleNames
from torchlint.training.loop import find_training_loops


def _loops(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    return find_training_loops(module, ModuleNames(module))


@pytest.mark.parametrize("before, passed, shown", [
    ("", "batch", True),  # the loop's own batch: no graph
    ("", "batch[0].float()", False),  # not a name: what it is computed from is not walked here
    ("encoded = encoder(images)", "encoded", False),  # a forward before the loop: its graph comes in
    ("outputs = [head(encoder(images)) for head in heads]", "outputs[0]", False),
])
def test_what_the_loop_passes_a_function_it_calls(before, passed, shown):
    (loop,) = _loops(f"""
        class Trainer:
            def process_batch(self, batch):
                self.optimizer.zero_grad()
                loss = self.criterion(self.model(batch), self.target)
                loss.backward(retain_graph=True)
                self.optimizer.step()

            def fit(self, batches, images, heads):
                {before}
                for batch in batches:
                    self.process_batch({passed})
    """)
    (backward,) = loop.backwards
    own = loop.call_graph_nodes(backward.via, backward.loss, backward.via.node)
    assert own.nodes
    assert ("batch" not in own.unknown) is shown


def test_the_loop_target_over_outputs_computed_before_the_loop():
    (loop,) = _loops("""
        class Trainer:
            def fit_head(self, out, target):
                loss = self.criterion(self.proj(out), target)
                loss.backward(retain_graph=True)

            def fit(self, features, heads, targets):
                outputs = [head(features) for head in heads]
                for out, target in zip(outputs, targets):
                    self.fit_head(out, target)
                    self.optimizer.step()
    """)
    (backward,) = loop.backwards
    assert "out" in loop.call_graph_nodes(backward.via, backward.loss, backward.via.node).unknown


@pytest.mark.parametrize("context, brought_in", [
    ("with torch.no_grad():", None),  # what an earlier iteration left has no graph
    ("if True:", "ref"),  # it has the graph the earlier iteration's forward made
])
def test_a_local_the_body_assigns_under_a_condition(context, brought_in):
    loops = _loops(f"""
        import torch

        def train(model, disc, loader, opt, warm):
            for i, (mels, ref_mels) in enumerate(loader):
                {context}
                    if i >= warm:
                        ref = model.style(ref_mels)
                d_loss = disc(mels, ref).mean()
                d_loss.backward(retain_graph=True)
                opt.step()
    """)
    (loop,) = loops
    (backward,) = loop.backwards
    assert loop.graph_brought_in(backward.loss, backward) == brought_in
