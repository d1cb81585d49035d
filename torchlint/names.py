"""Module-level name facts: import aliases, bindings, and what torch APIs they name.

A cheap alternative to LibCST's QualifiedNameProvider: one pass over the
module's imports gives an alias table, so `nn.MSELoss`, `torch.nn.MSELoss`
and `from torch.nn import MSELoss as M; M` all resolve to
`torch.nn.MSELoss`. Bindings record what each name (or `self.attr`) was
assigned, wherever in the file, so a rule can ask "was `criterion` built
with `reduction='sum'`?".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

from torchlint.wrappers import HANDING_BACK, MODULE_WRAPPERS, SAME_MODULE_METHODS

TORCH_LOSS_CLASSES = frozenset(
    {
        "L1Loss", "MSELoss", "CrossEntropyLoss", "CTCLoss", "NLLLoss", "NLLLoss2d",
        "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "BCELoss", "BCEWithLogitsLoss",
        "MarginRankingLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "HuberLoss",
        "SmoothL1Loss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
        "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
    }
)

TORCH_LOSS_FUNCTIONS = frozenset(
    {
        "l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "kl_div", "smooth_l1_loss", "huber_loss",
        "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
        "poisson_nll_loss", "gaussian_nll_loss", "hinge_embedding_loss",
        "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
        "triplet_margin_with_distance_loss", "ctc_loss", "multi_margin_loss",
    }
)

# Optimizer constructors outside torch.optim that people use in training loops.
OPTIMIZER_FACTORIES = frozenset(
    {
        "transformers.AdamW",
        "transformers.Adafactor",
        "transformers.optimization.AdamW",
        "transformers.optimization.Adafactor",
        "timm.optim.create_optimizer",
        "timm.optim.create_optimizer_v2",
        "torch.distributed.optim.ZeroRedundancyOptimizer",
    }
)
OPTIMIZER_PACKAGES = ("torch.optim.", "bitsandbytes.optim.", "apex.optimizers.", "torch_optimizer.")

GRAD_SCALERS = frozenset(
    {"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler", "torch.cpu.amp.GradScaler"}
)
NO_GRAD_CONTEXTS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
)


def short_callee(func: cst.BaseExpression) -> Optional[str]:
    """`step` for `step(...)` and `self.step(...)`: the name of a function of this file that a call may run."""
    kind = type(func)  # as `isinstance`: LibCST's node classes have no subclasses (and `type` is faster)
    if kind is cst.Name:
        return func.value
    if kind is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        return func.attr.value
    return None


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a chain of names and attributes, else None."""
    kind = type(node)
    if kind is cst.Name:
        return node.value
    if kind is cst.Attribute:
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def target_names(target: cst.BaseExpression) -> List[str]:
    """The names an assignment or `for` target binds, dotted ones too: `p` for `for p in ...`; `name` and
    `p` for `for name, p in model.named_parameters():`; `self.h` and `rest` for `self.h, *rest = ...`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    name = dotted_name(target)
    return [name] if name is not None else []


def slot_of(value: Optional[cst.BaseExpression], position: Tuple[int, ...]) -> Optional[cst.BaseExpression]:
    """The part of a value an unpacking target takes: `b` for position (1,) of `a, b, c` (`(1, 0)` for `x` of
    `a, (x, y)`); the value itself for no position; None when the value is not a tuple or list that long, or
    holds a starred element (whose length the code does not show)."""
    for index in position:
        if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements) \
                or any(isinstance(element, cst.StarredElement) for element in value.elements):
            return None
        value = value.elements[index].value
    return value


def last_component(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]


def prefixes(dotted: str) -> List[str]:
    """`a.b.c` -> [`a.b.c`, `a.b`, `a`]: the name and the objects it is an attribute of."""
    parts = dotted.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


@dataclass(frozen=True)
class Binding:
    """`target = value`, or the `index`-th element of a tuple unpacking."""

    value: cst.BaseExpression
    index: Optional[int] = None


class ModuleNames:
    """Import aliases and bindings of one module, collected in one walk."""

    def __init__(self, module: cst.Module) -> None:
        self.aliases: Dict[str, str] = {}
        # `from .engine import train_one_epoch` (level 1): local name -> (level, `engine.train_one_epoch`)
        self.relative: Dict[str, Tuple[int, str]] = {}
        # `from fastai.basics import *`: the modules the file imports every name of (absolute imports only)
        self.star_imports: List[str] = []
        # Where this file's imports lead among the project's own files (`torchlint.project.ProjectFiles`), when
        # the file is on disk: set by the file's context, read by the facts that follow a call into another file.
        self.project = None
        # Answers about this module's bindings that facts ask again and again, by question (`roles.parameter_owners`).
        self.memo: Dict[str, dict] = {}
        self.bindings: Dict[str, List[Binding]] = {}
        self.annotations: Dict[str, List[cst.BaseExpression]] = {}
        self.functions: Dict[str, List[cst.FunctionDef]] = {}
        self.classes: Dict[str, List[cst.ClassDef]] = {}
        self._wrapping: Optional[Tuple[Dict[str, Set[str]], Dict[str, Set[str]]]] = None
        self._aliases: Dict[Tuple[str, int], FrozenSet[str]] = {}
        _Collector(self).walk(module.body)

    # --- resolution -------------------------------------------------------------

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """The fully qualified name `node` refers to, if it starts at an import."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        origin = self.aliases.get(head)
        if origin is None:
            return None
        return f"{origin}.{rest}" if rest else origin

    def callee(self, call: cst.Call) -> Optional[str]:
        return self.qualify(call.func)

    def imported(self, dotted: str) -> Optional[Tuple[int, str]]:
        """Where an imported name leads: (0, `utils.loss.ComputeLoss`) for an absolute import, (1,
        `engine.train_one_epoch`) for `from .engine import train_one_epoch`; None for a name not imported."""
        head, _, rest = dotted.partition(".")
        if head in self.aliases:
            origin = self.aliases[head]
            return 0, f"{origin}.{rest}" if rest else origin
        if head in self.relative:
            level, origin = self.relative[head]
            return level, f"{origin}.{rest}" if rest else origin
        return None

    def values_of(self, target: str) -> List[cst.BaseExpression]:
        """Every expression assigned to `target` (`name` or `self.attr`) in the file."""
        values = []
        for binding in self.bindings.get(target, ()):
            value = binding.value
            if binding.index is not None and isinstance(value, (cst.Tuple, cst.List)):
                elements = value.elements
                if binding.index < len(elements):
                    values.append(elements[binding.index].value)
                continue
            values.append(value)
        return values

    def constructors_of(self, target: str) -> List[str]:
        """Qualified names of the calls `target` was bound to, where resolvable."""
        names = []
        for value in self.values_of(target):
            if isinstance(value, cst.Call):
                name = self.callee(value)
                if name:
                    names.append(name)
        for annotation in self.annotations.get(target, ()):
            name = self.qualify(annotation)
            if name:
                names.append(name)
        return names

    def aliases_of(self, target: str, rounds: int = 3) -> Set[str]:
        """`target` and the names bound to the same object: `self.model = model`,
        `model = DDP(model)`, `model = model.to(device)`, `model, opt = accelerator.prepare(model, opt)`.
        """
        cached = self._aliases.get((target, rounds))
        if cached is not None:
            return set(cached)
        wraps, wrapped_by = self._wrapping_index()
        found = {target}
        for _ in range(rounds):
            grown = set(found)
            for name in found:
                grown |= wraps.get(name, set())
                grown |= wrapped_by.get(name, set())
            if grown == found:
                break
            found = grown
        self._aliases[(target, rounds)] = frozenset(found)
        return found

    def _wrapping_index(self) -> Tuple[Dict[str, Set[str]], Dict[str, Set[str]]]:
        """name -> the names it wraps again, and name -> the names bound to a wrapping of it (built once)."""
        if self._wrapping is None:
            wraps: Dict[str, Set[str]] = {}
            wrapped_by: Dict[str, Set[str]] = {}
            for name, bindings in self.bindings.items():
                for binding in bindings:
                    inner = wrapped_name(binding)
                    if inner is not None:
                        wraps.setdefault(name, set()).add(inner)
                        wrapped_by.setdefault(inner, set()).add(name)
            self._wrapping = (wraps, wrapped_by)
        return self._wrapping

    # --- what a name is --------------------------------------------------------

    def is_optimizer_class(self, qualified: str) -> bool:
        if qualified in OPTIMIZER_FACTORIES:
            return True
        if "lr_scheduler" in qualified or "swa_utils" in qualified:
            return False
        return any(qualified.startswith(package) for package in OPTIMIZER_PACKAGES) and last_component(
            qualified
        )[:1].isupper()

    def is_loss_class(self, qualified: str) -> bool:
        return qualified.startswith("torch.nn.") and last_component(qualified) in TORCH_LOSS_CLASSES

    def is_loss_function(self, qualified: str) -> bool:
        return qualified.startswith("torch.nn.functional.") and last_component(qualified) in TORCH_LOSS_FUNCTIONS

    def is_scheduler_class(self, qualified: str) -> bool:
        return qualified.startswith("torch.optim.lr_scheduler.") or qualified.startswith("transformers.get_")


class _Collector:
    """Walks statements only: what it collects never hides inside an expression,
    and a statement walk costs a fraction of a full LibCST visit."""

    _SMALL = {
        cst.Import: "visit_Import",
        cst.ImportFrom: "visit_ImportFrom",
        cst.Assign: "visit_Assign",
        cst.AnnAssign: "visit_AnnAssign",
    }

    def __init__(self, names: ModuleNames) -> None:
        self.names = names

    def walk(self, statements) -> None:
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    method = self._SMALL.get(type(small))
                    if method is not None:
                        getattr(self, method)(small)
                continue
            if isinstance(statement, cst.FunctionDef):
                self.visit_FunctionDef(statement)
                params = statement.params
                for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                    self.visit_Param(param)
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    self.visit_WithItem(item)
            elif isinstance(statement, cst.ClassDef):
                self.names.classes.setdefault(statement.name.value, []).append(statement)
            for block in _nested_blocks(statement):
                self.walk(block)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.names.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".", 1)[0]
                self.names.aliases[head] = head

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative and not isinstance(node.names, cst.ImportStar):
            module = dotted_name(node.module) if node.module is not None else ""
            for alias in node.names:
                name = dotted_name(alias.name)
                if name is None or module is None:
                    continue
                local = alias.asname.name.value if alias.asname is not None and isinstance(
                    alias.asname.name, cst.Name) else name
                self.names.relative[local] = (len(node.relative), f"{module}.{name}" if module else name)
            return
        if node.module is None:
            return
        if isinstance(node.names, cst.ImportStar):
            star = dotted_name(node.module)
            if star is not None:
                self.names.star_imports.append(star)
            return
        module = dotted_name(node.module)
        if module is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.names.aliases[local] = f"{module}.{name}"

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        target = dotted_name(node.target)
        if target is not None:
            self.names.annotations.setdefault(target, []).append(node.annotation.annotation)
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_Param(self, node: cst.Param) -> None:
        if node.annotation is not None:
            self.names.annotations.setdefault(node.name.value, []).append(node.annotation.annotation)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.names.functions.setdefault(node.name.value, []).append(node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, node.item)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for index, element in enumerate(target.elements):
                name = dotted_name(element.value)
                if name is not None:
                    self.names.bindings.setdefault(name, []).append(Binding(value, index))
            return
        name = dotted_name(target)
        if name is not None:
            self.names.bindings.setdefault(name, []).append(Binding(value))


def wrapped_name(binding: Binding) -> Optional[str]:
    """The name a binding refers to again: `model` in `model.to(device)`, `DDP(model)`, `DDP(model.cuda())` or
    `model`, and the `model` of `model, opt = amp.initialize(model, opt)`."""
    value = binding.value
    if binding.index is not None:
        if isinstance(value, (cst.Tuple, cst.List)):
            return None  # values_of handles literal unpacking; no wrapping there
        callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
        if callee is None or last_component(callee) not in HANDING_BACK:
            return None
        passed = positional(value, binding.index)
        return dotted_name(passed) if passed is not None else None
    if isinstance(value, (cst.Name, cst.Attribute)):
        return dotted_name(value)
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in SAME_MODULE_METHODS:
        return dotted_name(func.value)
    callee = dotted_name(func)
    first = positional(value, 0)
    if callee is None or first is None or last_component(callee) not in MODULE_WRAPPERS:
        return None
    # `DDP(model.cuda(), ...)`, `DataParallel(model.to(device))`: the module moved, then wrapped
    return dotted_name(unmoved(first))


def unmoved(value: cst.BaseExpression) -> cst.BaseExpression:
    """`value` before the moves a module's methods make in place and hand back: `model` of `model.cuda().to(d)`,
    `Net(d)` of `Net(d).to(device).train()`."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in SAME_MODULE_METHODS:
        value = value.func.value
    return value


def _nested_blocks(statement: cst.CSTNode) -> list:
    """The statement lists nested in a compound statement (bodies, else, except, finally, cases)."""
    blocks = []
    parts = [statement, getattr(statement, "orelse", None), getattr(statement, "finalbody", None)]
    parts.extend(getattr(statement, "handlers", ()))
    parts.extend(getattr(statement, "cases", ()))
    for part in parts:
        if part is None:
            continue
        if isinstance(part, cst.If) and part is not statement:
            blocks.append([part])
            continue
        body = getattr(part, "body", None)
        if isinstance(body, cst.IndentedBlock):
            blocks.append(body.body)
        elif isinstance(body, cst.SimpleStatementSuite):
            blocks.append([body])
    return blocks


def keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional(call: cst.Call, index: int) -> Optional[cst.BaseExpression]:
    position = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            if position == index:
                return arg.value
            position += 1
    return None


def string_value(node: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    return None


def is_true(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def int_value(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value, 0)
        except ValueError:
            return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_value(node.expression)
        return -inner if inner is not None else None
    return None


def iter_names(node: cst.CSTNode) -> Iterable[str]:
    """Every dotted name read in an expression (`a`, `self.h`), outermost first."""
    from torchlint.walk import children

    found: List[str] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Lambda):
            continue
        if isinstance(current, cst.Name):
            found.append(current.value)
        elif isinstance(current, cst.Attribute):
            name = dotted_name(current)
            if name is not None:
                found.append(name)
                found.append(name.split(".", 1)[0])
                continue
        stack.extend(reversed(children(current)))
    return found


def unpack_tuple(node: cst.BaseExpression) -> Tuple[cst.BaseExpression, ...]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return tuple(element.value for element in node.elements)
    return (node,)
