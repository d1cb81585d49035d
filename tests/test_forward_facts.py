"""Model-forward facts: which `forward` a model call runs, what it returns on the paths the call takes
(`torchlint.training.forward`), and the pruned reaching definitions behind that (`FunctionFlow.pruned`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.flow import ControlFlowGraph, FunctionFlow
from torchlint.names import ModuleNames
from torchlint.training.calls import Functions
from torchlint.training.forward import model_forwards, spread_keywords

_CODE = cst.Module(body=[])

_TAGGER = """
import torch.nn as nn

class Tagger(nn.Module):
    def forward(self, x, labels=None):
        logits = self.head(x)
        outputs = (logits,)
        if labels is not None:
            loss = self.loss_fct(logits.view(-1, 5), labels.view(-1))
            outputs = (loss,) + outputs
        return outputs

class Sorter(nn.Module):
    def forward(self, x, labels=None):
        if labels is None:
            return self.head(x)
        return self.crf(self.head(x), labels)
"""


def _file(source: str):
    module = cst.parse_module(textwrap.dedent(_TAGGER + source))
    names = ModuleNames(module)
    return module, names, Functions(module, names)


def _call(module: cst.Module, code: str) -> cst.Call:
    return next(node for node in _walk(module) if isinstance(node, cst.Call) and _CODE.code_for_node(node) == code)


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def test_pruned_flow_drops_the_branch_a_non_none_argument_skips():
    module = cst.parse_module(textwrap.dedent(_TAGGER))
    forward = module.body[1].body.body[0]
    flow = FunctionFlow(ControlFlowGraph(forward))
    returned = next(node for node in flow.graph.nodes if isinstance(node.syntax, cst.Return))
    everything = [_CODE.code_for_node(d.value) for d in flow.reaching(returned.index, "outputs")]
    assert everything == ["(logits,)", "(loss,) + outputs"]
    given = flow.pruned(flow.graph.known_none("labels"))
    assert [_CODE.code_for_node(d.value) for d in given.reaching(returned.index, "outputs")] == ["(loss,) + outputs"]


@pytest.mark.parametrize("call, returned", [
    ("model(x, labels=y)", ["self.crf(self.head(x), labels)"]),  # `labels` passed: the loss only
    ("model(x, None)", ["self.head(x)", "self.crf(self.head(x), labels)"]),  # `None`: both paths
    ("model(x)", ["self.head(x)", "self.crf(self.head(x), labels)"]),  # not passed: both paths
])
def test_the_returns_a_call_reaches(call, returned):
    module, names, functions = _file(f"""
def train(loader):
    model = Sorter.from_pretrained("path")
    model = nn.DataParallel(model)
    for x, y in loader:
        out = {call}
""")
    (forward,) = model_forwards(_call(module, call), names, functions)
    assert forward.class_name == "Sorter"
    assert [_CODE.code_for_node(value) for value, _ in forward.returns()] == returned


def test_every_class_of_a_table():
    module, names, functions = _file("""
MODELS = {"tagger": (Config, Tagger), "sorter": (Config, Sorter)}

def train(args, loader):
    config_class, model_class = MODELS[args.kind]
    model = model_class.from_pretrained(args.path)
    for x, y in loader:
        out = model(x, labels=y)
""")
    forwards = model_forwards(_call(module, "model(x, labels=y)"), names, functions)
    assert [forward.class_name for forward in forwards] == ["Tagger", "Sorter"]


@pytest.mark.parametrize("binding", [
    "model = AutoModel.from_pretrained(args.path)",  # a library's class: its forward is not shown
    "model = build(args)",  # a function's result: which class is unknown
])
def test_a_model_of_unknown_class(binding):
    module, names, functions = _file(f"""
def train(args, loader):
    model = Tagger.from_pretrained(args.path)
    if args.other:
        {binding}
    for x, y in loader:
        out = model(x, labels=y)
""")
    assert model_forwards(_call(module, "model(x, labels=y)"), names, functions) is None


@pytest.mark.parametrize("caller, known", [
    ("train(args, loader, model)", True),
    ("train(args, loader, classifier)", False),  # another object than the file's `model`
])
def test_a_model_parameter_is_what_every_caller_passes(caller, known):
    module, names, functions = _file(f"""
def train(args, loader, model):
    for x, y in loader:
        out = model(x, labels=y)

def main(args, loader, classifier):
    model = Tagger.from_pretrained(args.path)
    {caller}
""")
    train = functions.module_functions["train"]
    found = model_forwards(_call(module, "model(x, labels=y)"), names, functions, train)
    assert (found is not None) is known


class _Scope:
    """The questions `spread_keywords` asks of a loop, asked of one function's flow."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.flow = FunctionFlow(ControlFlowGraph(function))

    def reaching(self, name: str, at: int):
        return self.flow.reaching(at, name)

    def node_of(self, call: cst.Call) -> int:
        holding = [node for node in self.flow.graph.nodes
                   if node.syntax is not None and any(part is call for part in _walk(node.syntax))]
        return min(holding, key=lambda node: len(_CODE.code_for_node(node.syntax))).index  # its statement


@pytest.mark.parametrize("change, returned", [
    ("", ["(loss,) + outputs"]),  # the dict holds `labels`: the labelled path only
    ('inputs["mask"] = batch[2]', ["(loss,) + outputs"]),  # another key written: `labels` still passed
    ('inputs["labels"] = None', ["(logits,)", "(loss,) + outputs"]),  # written again: unknown
    ('inputs.pop("labels")', ["(logits,)", "(loss,) + outputs"]),  # may be dropped
    ('inputs = {"x": batch[0]}', ["(logits,)", "(loss,) + outputs"]),  # a dict without labels on one path
])
def test_a_dict_spread_into_the_model_passes_its_keys(change, returned):
    module, names, functions = _file(f"""
def train(loader):
    model = Tagger().cuda()
    for batch in loader:
        inputs = {{"x": batch[0], "labels": batch[1]}}
        if batch[3]:
            {change or "pass"}
        out = model(**inputs)
""")
    call = _call(module, "model(**inputs)")
    train = functions.module_functions["train"]
    scope = _Scope(train)
    spread = spread_keywords(call, scope, scope.node_of(call))
    (forward,) = model_forwards(call, names, functions, train, spread)
    assert forward.class_name == "Tagger"
    ((_, at),) = forward.returns()
    assert [_CODE.code_for_node(d.value) for d in forward.reaching("outputs", at)] == returned


_SPANS = """
class Spans(nn.Module):
    def forward(self, x, start=None, end=None, weight=None):
        logits = self.head(x)
        if start is not None and end is not None:
            return self.loss(logits, start, end)
        return logits
"""


@pytest.mark.parametrize("call, returned", [
    ("model(x, start=s, end=e)", ["self.loss(logits, start, end)"]),  # both given: the loss only
    ("model(x, start=s)", ["self.loss(logits, start, end)", "logits"]),  # one of them missing: both paths
    ("model(x, s, e, w)", ["self.loss(logits, start, end)"]),
])
def test_a_branch_that_needs_several_arguments(call, returned):
    module, names, functions = _file(_SPANS + f"""
def train(loader):
    model = Spans()
    for x, s, e, w in loader:
        out = {call}
""")
    (forward,) = model_forwards(_call(module, call), names, functions)
    assert [_CODE.code_for_node(value) for value, _ in forward.returns()] == returned
