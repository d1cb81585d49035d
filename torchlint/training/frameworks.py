"""Frameworks: whose autograd a file trains with, and those that divide the loss by the accumulation count
themselves, and what they divide by.

A file that imports MXNet, Paddle, OneFlow, JAX, TensorFlow... and not torch is not PyTorch, however much
its loop looks like one (Gluon's `l.backward(); trainer.step(batch_size)` needs no `zero_grad`; OneFlow is
imported `as torch`): `Autograd` reads which from the file's imports, and in a file that imports both, which
framework the names a loop trains with come from.

Read from their sources: Accelerate's `Accelerator.backward` divides the loss by
`gradient_accumulation_steps` (except under DeepSpeed, whose engine does it); a DeepSpeed
engine's `backward(loss)` divides it by `engine.gradient_accumulation_steps()` unless given
`scale_wrt_gas=False`; Lightning's automatic optimisation divides what `training_step`
returns by the Trainer's `accumulate_grad_batches`. Only what the file shows counts: an
`Accelerator` built here with `gradient_accumulation_steps=` (or a plugin), a receiver bound to
`deepspeed.initialize(...)` or read for its own `gradient_accumulation_steps()`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Iterable, List, Optional, Tuple

import libcst as cst

from torchlint.names import (ModuleNames, dotted_name, int_value, is_true, iter_names, keyword, last_component,
                             positional)
from torchlint.parse import parse_module
from torchlint.walk import preorder
from torchlint.wrappers import AUTOGRAD_PACKAGES, TORCH

if TYPE_CHECKING:
    from torchlint.training.loop import TrainingLoop
    from torchlint.training.sites import BackwardSite, Site

# Frameworks whose training loops are spelled like PyTorch's (`loss.backward()`, `opt.step()`): in a file that
# imports torch as well, a loop may be either's. JAX's, TensorFlow's or MLX's gradients are never a
# `.backward()`, so a loop of such a file that has one is PyTorch's (JAX imported for data, say).
_TAPE_FRAMEWORKS = frozenset({"MXNet", "Paddle", "OneFlow", "MindSpore", "Chainer", "Jittor", "MegEngine",
                              "tinygrad"})


def framework_of(qualified: Optional[str]) -> Optional[str]:
    """The framework a qualified name belongs to: `mxnet.autograd.record` -> MXNet; None if none known."""
    if not qualified:
        return None
    parts = qualified.split(".")
    for end in range(len(parts), 0, -1):
        found = AUTOGRAD_PACKAGES.get(".".join(parts[:end]))
        if found is not None:
            return found
    return None


class Autograd:
    """Which framework's autograd a file's training loops run, from its imports (`from fastai.basics import *`
    too).

    `is_torch`: yes (it imports torch, or a PyTorch framework, and no other), no (it imports another
    framework and not torch: MXNet, Paddle, OneFlow imported `as torch`...), unknown (both, or neither:
    a file handed its model and optimizer imports none). Where both are imported, `foreign` judges one
    loop by where the names it trains with come from.
    """

    def __init__(self, names: ModuleNames) -> None:
        imported = {framework_of(origin) for origin in (*names.aliases.values(), *names.star_imports)} - {None}
        self.torch = TORCH in imported
        self.others: FrozenSet[str] = frozenset(imported - {TORCH})

    @property
    def is_torch(self) -> Optional[bool]:
        if self.torch != bool(self.others):
            return self.torch
        return None

    def foreign(self, qualified: Iterable[Optional[str]]) -> Optional[str]:
        """The other framework whose loop this is, given the qualified names its backward and step are bound
        to (the optimizer's constructor, the `with` recording the forward, the loss's criterion): in a
        file of another framework only, always; in a file that imports torch too, where those names come
        from another framework that spells loops like PyTorch (`from mxnet import autograd` ...
        `with autograd.record():`) and none from torch. None: PyTorch's, or nothing says otherwise."""
        if self.is_torch is False:
            return sorted(self.others)[0]
        if not self.torch or not self.others & _TAPE_FRAMEWORKS:
            return None
        owners = {framework_of(name) for name in qualified} - {None}
        if TORCH in owners:
            return None
        found = sorted(owners & _TAPE_FRAMEWORKS)
        return found[0] if found else None


# What builds an object whose `.backward(loss)` is the framework's, not a tensor's: Accelerate's and Fabric's
# `backward`, and the engine `deepspeed.initialize` returns (`model_engine.backward(loss)`).
DEEPSPEED_ENGINES = ("deepspeed.initialize",)
BACKWARD_OWNERS = ("accelerate.Accelerator", "lightning.Fabric", "lightning.fabric.Fabric") + DEEPSPEED_ENGINES


def deepspeed_window(loop: "TrainingLoop", count: cst.BaseExpression) -> bool:
    """DeepSpeed gates the step on its own window: the count is DeepSpeed's (the engine's
    `gradient_accumulation_steps()`, or read from its config before the loop) and every backward of the loop is
    a framework's (`model_engine.backward(loss)`, or Accelerate's `accelerator.backward(loss)`, which hands the
    loss to the engine under DeepSpeed): the engine steps at its own boundaries inside `backward`, and the loop's
    `optimizer.step()` between them does nothing. A plain `loss.backward()` and the optimizer's own `step()` are
    the loop's window, whatever DeepSpeed's argument parser added to `args`."""
    backwards = loop.loop_backwards
    if not backwards or any(backward.kind != "framework" for backward in backwards):
        return False
    pending = [count]
    for _ in range(3):
        found = []
        for expression in pending:
            for name in iter_names(expression):
                parts = name.split(".")
                owners = (".".join(parts[:end]) for end in range(1, len(parts) + 1))
                if "deepspeed" in name.lower() or any(
                        c.startswith(DEEPSPEED_ENGINES) for owner in owners for c in loop.names.constructors_of(owner)):
                    return True
                found += [d.value for d in loop.flow.entering(loop.iteration.region, name) if d.value is not None]
        pending = found
    return False


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
        stored = [spelling for count in self.counts for spelling in _stored_spellings(loop, count)]
        for value in _resolutions(loop, divisor):
            if any(loop.same_count(value, count) for count in self.counts):
                return True
            if dotted_name(value) is not None and dotted_name(value) in stored:
                return True
            read = value.func if isinstance(value, cst.Call) and not value.args else value
            if isinstance(read, cst.Attribute) and read.attr.value == COUNT_ATTRIBUTE \
                    and dotted_name(read.value) in owners:
                return (read is value) == (self.framework == "Accelerate")
        return False

    @property
    def steps_on_last(self) -> bool:
        """It also steps after the last micro-batch of an epoch: Accelerate does with a prepared loader (it knows
        the end), DeepSpeed's engine only at its own boundaries."""
        return self.framework != "DeepSpeed"

    @property
    def where(self) -> str:
        return f"`{self.owner}.backward()`"


def _stored_spellings(loop: "TrainingLoop", count: cst.BaseExpression) -> List[str]:
    """The count as the object's attributes spell it, where the method that builds the `Accelerator` with
    `cfg.train.accum` stores the parameter `cfg` it read it from (`self.cfg = cfg`): `self.cfg.train.accum`."""
    name = dotted_name(count)
    if name is None or loop.top_statement is None:
        return []
    root, _, rest = name.partition(".")
    for function in preorder(loop.top_statement):
        if not isinstance(function, cst.FunctionDef) or not any(part is count for part in preorder(function)):
            continue
        parameters = [p.name.value for p in function.params.params]
        if root not in parameters or parameters[0] != "self":
            return []
        stores, rebinds = [], 0
        for part in preorder(function):
            if isinstance(part, cst.Assign):
                for target in part.targets:
                    if dotted_name(part.value) == root and dotted_name(target.target) is not None:
                        stores.append(dotted_name(target.target))
                    if root in _bound_names(target.target):
                        rebinds += 1
            elif isinstance(part, (cst.AugAssign, cst.AnnAssign)) and dotted_name(part.target) == root:
                rebinds += 1
        if rebinds:
            return []
        return [f"{store}.{rest}" if rest else store for store in stores if store.startswith("self.")
                and len(loop.names.values_of(store)) == 1]
    return []


def _bound_names(target: cst.BaseExpression) -> List[str]:
    """The plain names an assignment target binds: `cfg`, `a, (b, *c)`; not `self.cfg` (an attribute)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _bound_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []


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


# --- Accelerate: the window of `accelerator.accumulate(model)` ---------------------------------------------


@dataclass(frozen=True)
class AccelerateWindow:
    """`with accelerator.accumulate(model):` around a site, by an `Accelerator` that accumulates `count`
    micro-batches (its `gradient_accumulation_steps=`, or its plugin's `num_steps=`): what it prepared steps
    (an optimizer) or advances (a scheduler) only at the end of each window; anything else, on every
    micro-batch."""

    accelerator: str  # `accelerator`, as the `with` names it
    count: cst.BaseExpression


def accelerate_window(loop: "TrainingLoop", site: "Site") -> Optional[AccelerateWindow]:
    """The window of the `accumulate(...)` around `site` (`TrainingLoop.accumulate_call`), when every value its
    receiver may have at the loop is an `Accelerator(...)` that accumulates the same count; None otherwise (no
    `accumulate`, an accelerator passed in, one that accumulates nothing)."""
    names = loop.names
    item = loop.accumulate_call(site)
    owner = dotted_name(item.func.value) if item is not None else None
    built = [call for value in _values_at_loop(loop, owner) for call in _branches(value)] if owner else []
    if not built or not all(isinstance(call, cst.Call) and names.callee(call) in _ACCELERATORS for call in built):
        return None
    counts = [_accelerator_count(call, names) for call in built]
    first = counts[0]
    if first is None or any(count is None or not count.deep_equals(first) for count in counts[1:]):
        return None
    return AccelerateWindow(owner, first)


def prepared_by(loop: "TrainingLoop", name: str, accelerator: str) -> bool:
    """Every value `name` may have at the loop is what `accelerator.prepare(...)` hands back (`model,
    optimizer, loader = accelerator.prepare(model, optimizer, loader)`)."""
    values = _values_at_loop(loop, name)
    return bool(values) and all(
        isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "prepare"
        and dotted_name(value.func.value) == accelerator for value in values)


def _values_at_loop(loop: "TrainingLoop", name: str) -> List[cst.BaseExpression]:
    """What `name` may hold when `loop` starts: the values its function's assignments reaching the loop give
    it (the whole right-hand side for an unpacked name), or for a name the function does not bind, the file's
    bindings of it; [] when some path gives it a value the code does not show (a parameter)."""
    definitions = loop.flow.entering(loop.iteration.region, name)
    if not definitions:
        return list(loop.names.values_of(name))
    if any(definition.kind != "assign" or definition.value is None for definition in definitions):
        return []
    return [definition.value for definition in definitions]


_PREPARE = re.compile(r"\.prepare\s*\(")


def may_be_prepared(name: str, text: str) -> bool:
    """The last part of `name` is spelled among the arguments of some `.prepare(...)` of the file's text, or the
    text assigns it from one: a superset read on the text itself, which a sparse parse may have blanked
    (`accelerator.prepare(lr_scheduler)` alone on its line, its result unused)."""
    word = re.compile(r"\b" + re.escape(last_component(name)) + r"\b")
    for match in _PREPARE.finditer(text):
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        start = text.rfind("\n", 0, match.start()) + 1  # the line it starts on: `lr_scheduler = accelerator.prepare(`
        if word.search(text, start, end):
            return True
    return False


# --- pytest: a test function run once per listed value ------------------------------------------

_PARAMETRIZE = frozenset({"pytest.mark.parametrize"})


def parametrized_values(function: cst.FunctionDef, parameter: str,
                        names: ModuleNames) -> Optional[List[cst.BaseExpression]]:
    """Every value pytest runs `function` with for `parameter`, listed in its decorator:
    `@pytest.mark.parametrize("accumulation_steps", [1, 10])`, `("dtype, steps", [(a, 1), (b, 4)])`,
    `pytest.param(4, marks=...)`. None where the decorator does not list them all (a list built
    elsewhere, `indirect=`), or where no decorator names `parameter`."""
    for decorator in function.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call) or names.callee(call) not in _PARAMETRIZE:
            continue
        argnames, argvalues = positional(call, 0) or keyword(call, "argnames"), \
            positional(call, 1) or keyword(call, "argvalues")
        if isinstance(argnames, cst.SimpleString):
            listed = [part.strip() for part in str(argnames.evaluated_value).split(",") if part.strip()]
        elif isinstance(argnames, (cst.List, cst.Tuple)) and all(
                isinstance(e.value, cst.SimpleString) for e in argnames.elements):
            listed = [str(e.value.evaluated_value).strip() for e in argnames.elements]
        else:
            continue
        if parameter not in listed:
            continue
        if keyword(call, "indirect") is not None or not isinstance(argvalues, (cst.List, cst.Tuple)):
            return None
        index, values = listed.index(parameter), []
        for element in argvalues.elements:
            if isinstance(element, cst.StarredElement):
                return None
            value = element.value
            if isinstance(value, cst.Call) and names.callee(value) == "pytest.param":  # `pytest.param(4, marks=...)`
                given = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
                value = given[0] if len(listed) == 1 and len(given) == 1 else cst.Tuple([cst.Element(v) for v in given])
            if len(listed) > 1:
                if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(listed):
                    return None
                value = value.elements[index].value
            values.append(value)
        return values
    return None



# --- Lightning hooks that run between a backward and the optimizer's step ------------------------

_LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning")
_HOOK_OWNERS = frozenset({"LightningModule", "Callback"})
# `on_after_backward` runs right after each backward (`loss.backward()` under automatic optimisation, or
# `self.manual_backward(loss)`); `on_before_optimizer_step` right before each step: both before the step.
BEFORE_STEP_HOOKS = ("on_after_backward", "on_before_optimizer_step")


@dataclass(frozen=True)
class HookReset:
    """`opt.zero_grad()` on every call of a Lightning hook that runs between the backward and the step."""

    call: cst.Call
    hook: cst.FunctionDef
    receiver: str


def hook_resets(module: cst.Module, names: ModuleNames) -> List[HookReset]:
    """The optimizer resets (`self.optimizers().zero_grad()`, `opt.zero_grad()` over `trainer.optimizers`, or
    the whole module's `self.zero_grad()` / `pl_module.zero_grad()`) outside any `if` in `on_after_backward` or
    `on_before_optimizer_step` of a subclass of Lightning's `LightningModule` or `Callback`. A submodule's
    reset (`self.encoder.zero_grad()`) freezes that part on purpose and is not one."""
    found: List[HookReset] = []
    for part in module.body:
        if not isinstance(part, cst.ClassDef) or not _lightning_hook_owner(part, names):
            continue
        for hook in part.body.body:
            if not isinstance(hook, cst.FunctionDef) or hook.name.value not in BEFORE_STEP_HOOKS:
                continue
            parameters = [p.name.value for p in hook.params.params]
            whole = {"self"} if "LightningModule" in _bases(part, names) else set(parameters[2:3])
            optimizers = set()
            for statement in _unconditional(list(hook.body.body)):
                if isinstance(statement, cst.For) and _lists_optimizers(statement.iter, parameters):
                    optimizers |= {n for n in iter_names(statement.target)}
                    statements = _unconditional(list(statement.body.body))
                else:
                    statements = [statement]
                for line in statements:
                    if not isinstance(line, cst.SimpleStatementLine):
                        continue
                    for small in line.body:
                        call = small.value if isinstance(small, cst.Expr) else None
                        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
                                or call.func.attr.value != "zero_grad":
                            continue
                        receiver = call.func.value
                        name = dotted_name(receiver)
                        optimizer = name in optimizers or (
                            isinstance(receiver, cst.Call) and dotted_name(receiver.func) == "self.optimizers")
                        if optimizer or name in whole:
                            found.append(HookReset(call, hook, name or "self.optimizers()"))
    return found


def _bases(class_def: cst.ClassDef, names: ModuleNames) -> List[str]:
    found = []
    for base in class_def.bases:
        qualified = names.qualify(base.value) or ""
        if qualified.split(".")[0] in _LIGHTNING_PACKAGES and qualified.split(".")[-1] in _HOOK_OWNERS:
            found.append(qualified.split(".")[-1])
    return found


def _lightning_hook_owner(class_def: cst.ClassDef, names: ModuleNames) -> bool:
    return bool(_bases(class_def, names))


def _lists_optimizers(iterable: cst.BaseExpression, parameters: List[str]) -> bool:
    """`trainer.optimizers` (the hook's `trainer`), `self.trainer.optimizers`, `self.optimizers()`."""
    if isinstance(iterable, cst.Call):
        return dotted_name(iterable.func) == "self.optimizers" and not iterable.args
    name = dotted_name(iterable)
    trainer = parameters[1] if len(parameters) > 1 and parameters[0] == "self" else None
    return name in ("self.trainer.optimizers",) or (trainer is not None and name == f"{trainer}.optimizers")


def _unconditional(statements: List[cst.CSTNode]) -> List[cst.CSTNode]:
    """The statements that run on every call: outside `if`/`try`/`while`, through `with`."""
    found: List[cst.CSTNode] = []
    for statement in statements:
        if isinstance(statement, cst.With):
            found += _unconditional(list(statement.body.body))
        elif isinstance(statement, (cst.SimpleStatementLine, cst.For)):
            found.append(statement)
    return found


# Ignite's `Engine`: the process function runs once per iteration and `engine.state.iteration` numbers the
# iterations of the whole `engine.run(data, max_epochs=E)` from 1 on, never started again in a new epoch
# (`engine.state.epoch` numbers the epochs): a run is E × `epoch_length` iterations, `len(data)` unless given.
# Ignite's own handlers, metrics and loggers (`ignite.handlers`, `ignite.metrics`, `ignite.contrib`) set learning
# rates, save, log and stop, and never step an optimizer; `ignite.engine`'s factories build trainers that do.
IGNITE_ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine", "ignite.engine.DeterministicEngine",
                            "ignite.engine.deterministic.DeterministicEngine"})
_ENGINE_USES = frozenset({"run", "add_event_handler", "on", "state", "terminate", "terminate_epoch",
                          "has_event_handler", "logger"})


@dataclass(frozen=True)
class IgniteRun:
    """The one `trainer.run(data, ...)` of an `Engine(update)` bound to `trainer`: how many iterations it runs,
    and whether anything the file attaches to an engine, or runs after the run, may step the update's optimizers.
    `flushed` is None where the file does not show it: the engine leaves for code the file does not show
    (passed to a function of the project, returned, stored), or a handler is one the file cannot read."""

    engine: str  # `trainer`
    call: cst.Call  # `trainer.run(train_loader, max_epochs=args.n_epochs)`
    data: Optional[cst.BaseExpression]
    epochs: Optional[cst.BaseExpression]  # `max_epochs`; None: Ignite's default, 1
    epoch_length: Optional[cst.BaseExpression]  # None: `len(data)`
    handlers: Tuple[cst.CSTNode, ...]  # what the file attaches to its engines, read for steps
    stepping: Tuple[cst.CSTNode, ...]  # those and the statements after the run that may step the optimizer
    readable: bool  # every use of the engine, every handler is one the file shows

    def may_flush(self) -> Optional[bool]:
        """False: nothing attached to an engine, nothing after the run steps the optimizer; True: something may;
        None: unknown."""
        if self.stepping:
            return True
        return False if self.readable else None


def ignite_run(module: cst.Module, names: ModuleNames, update: cst.FunctionDef,
               optimizers: FrozenSet[str]) -> Optional[IgniteRun]:
    """The run of the engine whose process function is `update`, where the file binds it (`trainer =
    Engine(update)`) and runs it once in the same function; None where it does not."""
    parents = _parents(module)
    bindings = _bindings(module)
    engine_call = None
    for node in parents:
        if isinstance(node, cst.Call) and names.callee(node) in IGNITE_ENGINES:
            handed = positional(node, 0) or keyword(node, "process_function")
            if isinstance(handed, cst.Name) and names.functions.get(handed.value) == [update]:
                engine_call = node
    if engine_call is None:
        return None
    assign = parents.get(engine_call)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
            or not isinstance(assign.targets[0].target, cst.Name):
        return None
    engine = assign.targets[0].target.value
    scope = _scope_of(assign, parents) or module
    runs: List[cst.Call] = []
    readable = True
    for node in preorder(scope):
        if not isinstance(node, cst.Name) or node.value != engine or node is assign.targets[0].target:
            continue
        use = parents.get(node)
        if isinstance(use, cst.Attribute) and use.value is node and use.attr.value in _ENGINE_USES:
            call = parents.get(use)
            if use.attr.value == "run" and isinstance(call, cst.Call) and call.func is use:
                runs.append(call)
            continue
        if isinstance(use, cst.Arg) and _ignite_helper(parents.get(use), names, bindings):
            continue
        if isinstance(use, (cst.Arg, cst.Attribute, cst.Return, cst.Assign, cst.AnnAssign, cst.Element,
                            cst.AssignTarget, cst.Call)) or use is None:
            readable = False  # the engine goes where the file does not show what is attached to it
    if len(runs) != 1 or len(bindings.get(engine, [])) != 1:
        return None
    run = runs[0]
    handlers = tuple(_handlers(module, parents))
    stepping = []
    for handler in handlers:
        readable_here, steps = _handler_steps(handler, names, bindings, optimizers, set())
        readable = readable and readable_here
        if steps:
            stepping.append(handler)
    statement = run
    while statement is not None and not isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        statement = parents.get(statement)
    container = parents.get(statement)
    body = getattr(container, "body", None)
    if isinstance(body, (list, tuple)) and statement in body:
        for later in body[body.index(statement) + 1:]:
            if _handler_steps(later, names, bindings, optimizers, set())[1]:
                stepping.append(later)
    return IgniteRun(engine, run, positional(run, 0) or keyword(run, "data"),
                     positional(run, 1) or keyword(run, "max_epochs"),
                     positional(run, 2) or keyword(run, "epoch_length"), handlers, tuple(stepping), readable)


def _parents(module: cst.Module) -> dict:
    parents: dict = {}
    pending: List[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        for child in node.children:
            parents[child] = node
            pending.append(child)
    return parents


def _bindings(module: cst.Module) -> dict:
    """Each name the file assigns, with the values it assigns it (`pbar` -> [`ProgressBar(persist=True)`])."""
    bound: dict = {}
    for node in preorder(module):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name in _bound_names(target.target):
                    bound.setdefault(name, []).append(node.value)
    return bound


def _scope_of(node: cst.CSTNode, parents: dict) -> Optional[cst.FunctionDef]:
    here = parents.get(node)
    while here is not None and not isinstance(here, cst.FunctionDef):
        here = parents.get(here)
    return here


def _ignite_object(value: Optional[cst.BaseExpression], names: ModuleNames, bindings: dict) -> bool:
    """An object of Ignite's handlers, metrics or loggers: built by a call of theirs here or where the name is
    bound (`RunningAverage(...)`, `pbar` of `pbar = ProgressBar(persist=True)`)."""
    if isinstance(value, cst.Name):
        values = bindings.get(value.value, [])
        return len(values) == 1 and _ignite_object(values[0], names, bindings)
    if isinstance(value, cst.Call):
        qualified = names.callee(value) or ""
        return qualified.startswith("ignite.") and not qualified.startswith("ignite.engine")
    return False


def _ignite_helper(call: Optional[cst.CSTNode], names: ModuleNames, bindings: dict) -> bool:
    """A call of Ignite's that is handed the engine: `global_step_from_engine(trainer)`, `pbar.attach(trainer)`,
    `RunningAverage(...).attach(trainer, "loss")`."""
    if not isinstance(call, cst.Call):
        return False
    if _ignite_object(call, names, bindings):
        return True
    func = call.func
    return isinstance(func, cst.Attribute) and _ignite_object(func.value, names, bindings)


def _handlers(module: cst.Module, parents: dict) -> Iterable[cst.CSTNode]:
    """What the file attaches to any engine: `X.add_event_handler(event, handler)`, functions decorated with
    `@X.on(event)`, `X.on(event)(handler)`."""
    for node in preorder(module):
        if isinstance(node, cst.FunctionDef):
            for decorator in node.decorators:
                deco = decorator.decorator
                if isinstance(deco, cst.Call) and isinstance(deco.func, cst.Attribute) and deco.func.attr.value == "on":
                    yield node
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            continue
        if node.func.attr.value == "add_event_handler":
            handler = positional(node, 1) or keyword(node, "handler")
            if handler is not None:
                yield handler
        elif node.func.attr.value == "on" and isinstance(parents.get(node), cst.Call) \
                and parents[node].func is node and parents[node].args:
            yield parents[node].args[0].value


def _handler_steps(handler: cst.CSTNode, names: ModuleNames, bindings: dict, optimizers: FrozenSet[str],
                   seen: set) -> Tuple[bool, bool]:
    """(readable, may step `optimizer`) for a handler: a lambda or a function of the file is read, through the
    functions of the file it calls and the engines of the file it runs (`evaluator.run(...)`); an object of
    Ignite's steps nothing; anything else is not readable."""
    if isinstance(handler, cst.Name):
        defined = names.functions.get(handler.value, [])
        if len(defined) == 1:
            handler = defined[0]
        elif _ignite_object(handler, names, bindings):
            return True, False
        else:
            return False, False
    elif isinstance(handler, cst.Call) and _ignite_object(handler, names, bindings):
        return True, False
    elif not isinstance(handler, (cst.Lambda, cst.FunctionDef, cst.BaseStatement)):
        return False, False
    if id(handler) in seen:
        return True, False
    seen.add(id(handler))
    readable = True
    for node in preorder(handler):
        if isinstance(node, cst.Name) and node.value in optimizers:
            return readable, True  # the optimizer, or a call handed it: may step it
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "step":
            return readable, True
        if isinstance(func, cst.Name) and len(names.functions.get(func.value, [])) == 1:
            here, steps = _handler_steps(func, names, bindings, optimizers, seen)
            readable = readable and here
            if steps:
                return readable, True
        if isinstance(func, cst.Attribute) and func.attr.value == "run" and isinstance(func.value, cst.Name):
            for value in bindings.get(func.value.value, []):
                if isinstance(value, cst.Call) and names.callee(value) in IGNITE_ENGINES:
                    process = positional(value, 0) or keyword(value, "process_function")
                    here, steps = _handler_steps(process, names, bindings, optimizers, seen) \
                        if process is not None else (False, False)
                    readable = readable and here
                    if steps:
                        return readable, True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            for value in bindings.get(func.value.value, []):  # an object built from the optimizer may step it
                if _built_from(value, optimizers, names):
                    return readable, True
    return readable, False


# Packages whose calls hand back what they are given, wrapped (`model, optimizer = amp.initialize(model,
# optimizer)`, `DistributedDataParallel(model)`): the model they return holds no optimizer to step.
_WRAPPING_PACKAGES = ("torch.", "apex.")


def _built_from(value: cst.BaseExpression, optimizers: FrozenSet[str], names: ModuleNames) -> bool:
    """`value` is handed the optimizer by a call the file does not know to only wrap it."""
    if not any(isinstance(n, cst.Name) and n.value in optimizers for n in preorder(value)):
        return False
    return not (isinstance(value, cst.Call) and (names.callee(value) or "").startswith(_WRAPPING_PACKAGES))


# The Hugging Face `Trainer`'s methods a subclass inherits, as the code they run on every call (modelled from
# `transformers.Trainer`, which a subclass's own `train()` loop calls): `training_step` computes the loss with
# `self.compute_loss`, divides it by `gradient_accumulation_steps` when that is above 1 and runs its backward.
HF_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
                         "transformers.trainer_seq2seq.Seq2SeqTrainer"})
_HF_TRAINER_METHODS = '''
def training_step(self, model, inputs):
    loss = self.compute_loss(model, inputs)
    if self.args.gradient_accumulation_steps > 1:
        loss = loss / self.args.gradient_accumulation_steps
    loss.backward()
    return loss.detach()
'''


class FrameworkModule:
    """A framework's code as modelled here, standing where another file of the project would (`calls.Via.elsewhere`):
    the sites a loop's call runs in it are recorded at that call, and messages name the framework."""

    def __init__(self, framework: str, source: str) -> None:
        self.framework = framework  # how messages name it: "transformers' `Trainer`"
        self.module = parse_module(source)
        self.names = ModuleNames(self.module)
        self.path = framework
        self._functions = None

    @property
    def functions(self):
        if self._functions is None:
            from torchlint.training.calls import Functions

            self._functions = Functions(self.module, self.names)
        return self._functions

    def method(self, name: str) -> Optional[cst.FunctionDef]:
        return next((statement for statement in self.module.body
                     if isinstance(statement, cst.FunctionDef) and statement.name.value == name), None)


def hf_trainer() -> FrameworkModule:
    """The modelled methods of the Hugging Face `Trainer` (parsed afresh: each file's facts own theirs)."""
    return FrameworkModule("transformers' `Trainer`", _HF_TRAINER_METHODS)
