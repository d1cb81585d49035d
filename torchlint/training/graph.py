"""Graph state: which values carry an autograd graph, and what cuts it.

One table of effects, used by every rule that asks whether a name still
holds a graph:

- cuts: `x.detach()`, `x.detach_()` (in place, also on each element:
  `for s in state: s.detach_()`, `hidden[0].detach_()`), `x.data` (the
  same storage without its history: `h.data.clone()`, `[s.data for s in
  h]`), the old `Variable(...)` wrapper (it makes a new leaf), a helper that
  returns detached values (`repackage_hidden(h)`, one of this file whose
  every `return` detaches, or one named for it), a tuple or comprehension
  of detached values;
- conversions that keep the graph: `tuple(state)`, `list(state)`,
  `x.to(device)`, `x.float()`: not a detach;
- values with no graph at all: numbers, `x.item()`, `x.tolist()`, `float(x)`.

`graph_state` answers for a value: `YES` it carries a graph (a forward pass,
`backbone(x)`), `NO` it carries none (numbers, strings, detached values,
torch factories, a module built by its class), or `UNKNOWN` where the code
does not show it (a value that arrives as a parameter, from an attribute set
elsewhere, from a call of unknown effect).

The in-place effects enter the control-flow graph as definitions of the
name (`torchlint.flow.cfg`'s `effects` hook), so reaching definitions see a
detached value after `h.detach_()` like after `h = h.detach()`.
"""

from __future__ import annotations

import functools
from typing import Callable, Iterable, List, Optional, Tuple

import libcst as cst

from torchlint.flow import Definition
from torchlint.flow.cfg import block_of
from torchlint.names import ModuleNames, dotted_name, iter_names, last_component, slot_of
from torchlint.walk import children

DETACH = "detach"

# Tensor methods whose result keeps the receiver's graph.
TENSOR_METHODS = frozenset(
    {"mean", "sum", "view", "reshape", "flatten", "squeeze", "unsqueeze", "float", "to", "contiguous", "permute",
     "transpose", "chunk", "split", "softmax", "log_softmax"}
)
# Tensor methods whose result is still attached to the receiver's graph.
GRAPH_KEEPING_METHODS = TENSOR_METHODS | {"cpu", "cuda", "clone", "double", "half", "abs", "sqrt", "exp", "type"}
# Methods that give a plain Python value: no graph.
_TO_PYTHON = frozenset({"item", "tolist", "numpy"})  # `numpy()` also refuses a tensor that requires grad
# Calls whose result is their argument's elements, graph and all.
_CONTAINERS = frozenset({"tuple", "list", "dict", "set"})
_DETACHING_WORDS = ("detach", "repackage")
# Three answers to "does this value carry an autograd graph?".
YES, NO, UNKNOWN = "yes", "no", "unknown"
# torch functions whose result is a new leaf whatever their arguments (sizes, a tensor to copy the shape of).
FACTORIES = frozenset({"zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
                        "linspace", "eye", "tensor", "zeros_like", "ones_like", "empty_like", "full_like",
                        "rand_like", "randn_like", "randint_like", "load", "from_numpy"})
# Arguments that say where or how, never what: they carry no graph into the result.
SETTINGS = frozenset({"device", "dtype", "requires_grad", "layout", "pin_memory", "non_blocking",
                      "memory_format", "generator", "copy"})
# Tensor methods whose result is computed from the receiver and the tensors passed: `a.mul(b)`.
_DATA_METHODS = frozenset(
    {"requires_grad_", "add", "sub", "mul", "div", "matmul", "mm", "bmm", "pow", "neg", "log", "sigmoid", "tanh",
     "relu", "clamp", "norm", "masked_fill", "gather", "index_select", "expand", "expand_as", "repeat", "t",
     "prod", "max", "min", "var", "std", "narrow", "type_as", "logsumexp", "cumsum", "squeeze_", "unsqueeze_"}
)
# Builtins whose result is made of their arguments' elements; builtins that give a plain number.
_ELEMENTS = _CONTAINERS | {"sum", "zip", "enumerate", "reversed", "sorted", "max", "min", "abs", "iter", "next"}
_NUMBERS = frozenset({"len", "int", "float", "round", "bool", "str", "range", "isinstance", "size", "dim", "numel"})
# `Variable(h.data)`: the pre-0.4 wrapper builds a new leaf, cut from any history its argument had.
_NEW_LEAVES = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def inplace_effects(syntax: cst.CSTNode) -> Iterable[Tuple[str, str]]:
    """The names a statement detaches in place: `h.detach_()` and `hidden[0].detach_()` detach `h` and
    `hidden`; `for s in state: s.detach_()` and `[s.detach_() for s in state]` detach `state` (as a
    whole, when the loop is entered)."""
    if isinstance(syntax, cst.For):
        target = dotted_name(syntax.target)
        iterable = syntax.iter
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value == "values":
            iterable = iterable.func.value
        owner = dotted_name(iterable)
        if target is not None and owner is not None and target in _detached_in_place(_direct_statements(syntax)):
            yield owner, DETACH
        return
    if isinstance(syntax, cst.Expr):
        for name in _detached_in_place([syntax]):
            yield name, DETACH
        value = syntax.value
        # `[s.detach_() for s in state]`
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and value.for_in.inner_for_in is None:
            target, owner = dotted_name(value.for_in.target), dotted_name(value.for_in.iter)
            call = value.elt
            if target is not None and owner is not None and isinstance(call, cst.Call) \
                    and isinstance(call.func, cst.Attribute) and call.func.attr.value == "detach_" \
                    and dotted_name(call.func.value) == target:
                yield owner, DETACH


def _direct_statements(loop: cst.For) -> List[cst.BaseSmallStatement]:
    return [small for line in block_of(loop) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
            for small in line.body]


def _detached_in_place(statements: Iterable[cst.BaseSmallStatement]) -> List[str]:
    found = []
    for small in statements:
        if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
            continue
        func = small.value.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "detach_":
            continue
        receiver = func.value
        while isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        name = dotted_name(receiver)
        if name is not None and not name.endswith((".grad", ".data")):
            found.append(name)
    return found


def detaches(value: Optional[cst.BaseExpression], names: Optional[ModuleNames] = None, depth: int = 0) -> bool:
    """The value is cut from the graph of what it is computed from: `h.detach()`,
    `repackage_hidden(h)`, `(h.detach(), c.detach())`, `tuple(s.detach() for s in h)`,
    `h.detach().clone()`, `h.item()`, `h.data`, `Variable(h.data)`, `[s.data for s in h]`."""
    if depth > 4 or value is None:
        return False
    if isinstance(value, cst.Attribute):
        return value.attr.value == "data"  # `h.data`: the tensor's storage, without its history
    if isinstance(value, cst.Subscript):
        return detaches(value.value, names, depth + 1)  # `h.data[0]`, `state.detach()[0]`
    if isinstance(value, (cst.Tuple, cst.List)):
        return bool(value.elements) and all(detaches(element.value, names, depth + 1) for element in value.elements)
    if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return detaches(value.elt, names, depth + 1)
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in ("detach", "detach_") or method in _TO_PYTHON:
            return True
        if method in GRAPH_KEEPING_METHODS:  # `h.detach().clone()`, `h.detach().to(device)`
            return detaches(func.value, names, depth + 1)
    if names is not None and names.qualify(func) in _NEW_LEAVES:
        return True
    callee = dotted_name(func)
    if callee is None:
        return False
    short = last_component(callee)
    if short in _CONTAINERS or short == "float":
        # `tuple(h)` keeps the graph; `tuple(s.detach() for s in h)` does not; `float(loss)` has none.
        if short == "float":
            return True
        return any(detaches(arg.value, names, depth + 1) for arg in value.args[:1])
    if any(word in short.lower() for word in _DETACHING_WORDS):
        return True
    return names is not None and _helper_detaches(short, names, depth)


def cuts(definition: Definition, names: Optional[ModuleNames] = None) -> bool:
    """The name's new value carries no graph of what it is computed from: a detach (also in place),
    `del`, or the slot of a helper's result that the helper always detaches
    (`loss, mean_path, _ = regularize(...)` where every `return` gives `(..., path.detach(), ...)`)."""
    if definition.kind == "del" or (definition.kind == "effect" and definition.effect == DETACH):
        return True
    if definition.unpacked:
        return bool(definition.position) and _slot_detached(definition.value, definition.position, names)
    return detaches(definition.value, names)


def _slot_detached(value: Optional[cst.BaseExpression], position: Tuple[int, ...],
                   names: Optional[ModuleNames]) -> bool:
    if not isinstance(value, cst.Call) or names is None:
        return False
    callee = dotted_name(value.func)
    if callee is None:
        return False
    for function in names.functions.get(last_component(callee), ()):
        returns = [slot_of(node.value, position) for node in _returns(function)]
        if returns and all(part is not None and detaches(part, names) for part in returns):
            return True
    return False


def _helper_detaches(name: str, names: ModuleNames, depth: int) -> bool:
    """A function of this file whose every `return` gives a detached value (recursion counts as one)."""
    functions = names.functions.get(name, ())
    for function in functions:
        returns = [node.value for node in _returns(function)]
        if returns and all(
            value is not None and (detaches(value, names, depth + 2) or _calls_itself(value, name))
            for value in returns
        ):
            return True
    return False


def _calls_itself(value: cst.BaseExpression, name: str) -> bool:
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        value = value.elt
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("tuple", "list") and value.args:
        inner = value.args[0].value
        value = inner.elt if isinstance(inner, (cst.ListComp, cst.GeneratorExp)) else inner
    return isinstance(value, cst.Call) and dotted_name(value.func) == name


def _returns(function: cst.FunctionDef) -> List[cst.Return]:
    """The `return` statements of `function`'s own body (not of the functions, classes and lambdas in it)."""
    found: List[cst.Return] = []
    pending: List[cst.CSTNode] = [function.body]
    scopes, return_ = _SCOPES, cst.Return
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in scopes:
            continue
        if kind is return_:
            found.append(node)
            continue
        pending.extend(children(node))  # LibCST's own `node.children` lists whitespace too, many times slower
    return found


_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def feeds_itself(value: Optional[cst.BaseExpression], name: str, names: Optional[ModuleNames] = None) -> bool:
    """`rnn(x, h)`, `model(state)`, `lstm(x, (h, c))`: a call that takes the name straight back in
    and computes something new from it (not a detach, not a conversion like `tuple(state)`)."""
    if not isinstance(value, cst.Call):
        return False
    callee = dotted_name(value.func)
    if callee is None or last_component(callee) in _CONTAINERS:
        return False
    for arg in value.args:
        passed = [element.value for element in arg.value.elements] \
            if isinstance(arg.value, (cst.Tuple, cst.List)) else [arg.value]
        if any(dotted_name(item) == name for item in passed):
            return not detaches(value, names)  # asked last: it may read the helpers the call runs
    return False


def value_names(node: cst.BaseExpression) -> List[str]:
    """Dotted names `node` reads as values: arguments and operands, not the callables it calls."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        name = dotted_name(node)
        return [name] if name is not None else []
    if isinstance(node, cst.Call):
        found = [name for arg in node.args for name in value_names(arg.value)]
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_METHODS:
            found += value_names(func.value)
        return found
    return [name for part in value_parts(node) for name in value_names(part)]


def value_parts(node: cst.CSTNode) -> List[cst.BaseExpression]:
    """The sub-expressions whose values flow into `node`: operands, elements, subscripted values."""
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Subscript):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [element.value for element in node.elements]
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return [node.elt]
    return []


def builds_graph(value: cst.BaseExpression, names: ModuleNames,
                 earlier: Callable[[str], Optional[cst.BaseExpression]], depth: int = 0) -> bool:
    """`backbone(x)` or an expression over one: a tensor with a graph, as far as the code shows.
    `earlier(name)` gives the value a name had before the loop."""
    if depth > 3:
        return False
    if isinstance(value, cst.Call):
        if names.qualify(value.func) is not None:
            # torch factories make leaves; `F.relu(features)` keeps the graph of its input.
            return any(builds_graph(arg.value, names, earlier, depth + 1) for arg in value.args)
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_METHODS:
            return builds_graph(value.func.value, names, earlier, depth + 1)
        # A lower-case callable with inputs is a module's forward; `Net(...)` builds a module.
        callee = dotted_name(value.func) or ""
        return bool(value.args) and not last_component(callee)[:1].isupper()
    if isinstance(value, (cst.Name, cst.Attribute)):
        before = earlier(dotted_name(value) or "")
        return before is not None and builds_graph(before, names, earlier, depth + 1)
    return any(builds_graph(part, names, earlier, depth + 1) for part in value_parts(value))


def combine(states: Iterable[str]) -> str:
    """The graph state of a value made of parts: a graph if any part has one, unknown if any part is."""
    found = set(states)
    if YES in found:
        return YES
    return UNKNOWN if UNKNOWN in found else NO


def graph_state(value: Optional[cst.BaseExpression], names: ModuleNames, earlier: Callable[[str], str],
                inherited: bool = False, depth: int = 0) -> str:
    """Whether `value` carries an autograd graph: YES, NO or UNKNOWN; `earlier(name)` gives the state of
    a name it reads.

    NO: numbers and strings, detached values (`h.detach()`, `h.data`, `x.item()`), torch factories
    (`torch.zeros(n, device=device)`), an object built by its class (`Net()`, `nn.MSELoss()`), torch
    functions and tensor methods of values without one. YES: a forward pass (`backbone(x)`: a lower-case
    callable with inputs) or an expression over one. UNKNOWN: a call that shows no inputs
    (`get_target()`), a function of another library, anything the code does not show.

    `inherited`: only the graph that the inputs bring in counts, not the one a forward pass builds on
    them (`criterion(model(x), y)` brings in what `x` and `y` carry): the question "does a graph from
    elsewhere flow into this value?".
    """
    if depth > 8 or value is None:
        return UNKNOWN
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                          cst.FormattedString, cst.Lambda)) or detaches(value, names):
        return NO
    if isinstance(value, (cst.Name, cst.Attribute)):
        name = dotted_name(value)
        if name in ("None", "True", "False"):
            return NO
        return earlier(name) if name is not None else UNKNOWN

    def state(part: Optional[cst.BaseExpression], reader: Callable[[str], str] = earlier) -> str:
        return graph_state(part, names, reader, inherited, depth + 1)

    if isinstance(value, cst.Call):
        return _call_graph_state(value, names, state, inherited)
    if isinstance(value, cst.Subscript):
        return state(value.value)
    if isinstance(value, cst.IfExp):
        return combine((state(value.body), state(value.orelse)))
    if isinstance(value, cst.Dict):
        return combine(state(element.value) for element in value.elements)
    if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        # The comprehension's own names hold elements of its iterables.
        bound: dict = {}
        clause: Optional[cst.CompFor] = value.for_in
        while clause is not None:
            reader = functools.partial(_comprehension_name, bound, earlier)
            iterated = state(clause.iter, reader)
            bound.update({name: iterated for name in iter_names(clause.target)})
            clause = clause.inner_for_in
        return state(value.elt, functools.partial(_comprehension_name, bound, earlier))
    if isinstance(value, (cst.Tuple, cst.List)) and not value.elements:
        return NO
    parts = value_parts(value)
    return combine(state(part) for part in parts) if parts else UNKNOWN


def _comprehension_name(bound: dict, earlier: Callable[[str], str], name: str) -> str:
    root = name.split(".")[0]
    return bound[root] if root in bound else earlier(name)


def _call_graph_state(call: cst.Call, names: ModuleNames, state: Callable[..., str], inherited: bool) -> str:
    func = call.func
    short = last_component(dotted_name(func) or "")
    inputs = [arg.value for arg in call.args if not _setting(arg)]
    qualified = names.qualify(func)
    if (short[:1].isupper() and not names.values_of(dotted_name(func) or "")) or short in _NUMBERS:
        return NO  # a class (a module, a loss object, an optimizer), or a plain number; `G = Net()` then
        # `G(z)` calls an instance: a forward pass
    if qualified is not None and qualified.startswith("torch.") and short in FACTORIES:
        return NO
    if isinstance(func, cst.Attribute) and qualified is None:
        if func.attr.value in GRAPH_KEEPING_METHODS:
            return state(func.value)  # `x.to(device)`, `x.view(n, -1)`: the arguments say where or what shape
        if func.attr.value in _DATA_METHODS or func.attr.value.endswith("_"):
            # `a.mul(b)`; an in-place operation (`a.scatter_(1, idx, b)`) gives its receiver, computed from both
            return combine([state(func.value)] + [state(arg) for arg in inputs])
    if short in _ELEMENTS or (qualified is not None and qualified.startswith("torch.")):
        return combine(state(arg) for arg in inputs)  # `torch.cat([a, b])`, `sum(losses)`, `zip(f, g)`
    if inherited:
        # A forward pass, or a method of an object: what its inputs bring in; one without inputs shows nothing.
        return combine(state(arg) for arg in inputs) if call.args else UNKNOWN
    if qualified is not None:
        return UNKNOWN  # a function of another library
    return YES if call.args else UNKNOWN  # a module's forward, as `builds_graph` reads it


RECURRENT_MODULES = frozenset({"torch.nn.RNN", "torch.nn.GRU", "torch.nn.LSTM", "torch.nn.RNNCell", "torch.nn.GRUCell",
                               "torch.nn.LSTMCell"})


def recurrent_module(call: cst.Call, names: ModuleNames) -> bool:
    """`call` runs a torch recurrent module (`self.gru(x, h)` of a `self.gru = nn.GRU(...)`): the state it hands
    back beside its output is computed in that forward, graph and all."""
    callee = dotted_name(call.func)
    constructors = set(names.constructors_of(callee)) if callee else set()
    return bool(constructors) and constructors <= RECURRENT_MODULES


def _setting(arg: cst.Arg) -> bool:
    return arg.keyword is not None and arg.keyword.value in SETTINGS
