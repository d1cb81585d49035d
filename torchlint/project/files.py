"""A file of the project read with LibCST when a fact needs it (`imports` says which file an import names).

A module read here is parsed whole once per process and content (path, size, modification time);
what the facts take from it is a function or a class of it and its own names. A file that does not
parse, or is too big to be worth it, is not the project's as far as the facts go.

What an object called in a loop is (`ProjectFiles.carrier_of`, `handed`) is read from the project's
index (`torchlint.project.index`, stdlib `ast`); only the file of the class or function it leads to
is parsed, and only when the index says that class's method or that function runs a backward.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.names import ModuleNames, dotted_name
from torchlint.parse import parse_module
from torchlint.wrappers import HANDING_BACK, LOADERS, MODULE_WRAPPERS, SAME_MODULE_METHODS
from torchlint.project.imports import Lookup, module_file
from torchlint.project.pins import TorchPin, torch_pin
from torchlint.project.index import (
    NOTHING, BindingSite, CallSummary, FileSummary, ProjectIndex, changes, file_stamp, file_summary, guard_text,
    open_text, read_text,
)

# Modules bigger than this are not read for a fact (a vendored library, generated code).
_MAX_BYTES = 1_000_000

Definition = Union[cst.FunctionDef, cst.ClassDef]


@dataclass(frozen=True)
class ProjectModule:
    """A file of the project, parsed: its module and the names it binds (with its own imports resolved)."""

    path: Path
    module: cst.Module
    names: ModuleNames

    @functools.cached_property
    def functions(self):
        """The module's functions as `training.calls.Functions` indexes them (their graphs, their returns)."""
        from torchlint.training.calls import Functions

        return Functions(self.module, self.names)

    def definition(self, dotted: str) -> Optional[Definition]:
        """`ComputeLoss`, `masked_mean` or `Trainer.step`: a top-level function or class, or a method of one."""
        head, _, rest = dotted.partition(".")
        found = _top_level(self.module.body, head)
        if not rest or found is None:
            return found
        if isinstance(found, cst.ClassDef) and "." not in rest:
            return _top_level(found.body.body, rest)
        return None


@dataclass(frozen=True)
class Wrapping:
    """Where a caller wraps the model it passes: `model = DDP(model, ...)` in `train_worker()` of `main.py`."""

    path: str  # the caller's file
    line: int  # the line of the wrap
    scope: str  # the function the wrap is in (`main`, `Trainer.fit`), "" at module level
    condition: Optional[str] = None  # the test the wrap waits for, as written (`args.distributed`); None: always


class ProjectFiles:
    """The project as seen from one file: where its imports lead, and what is defined there."""

    def __init__(self, importer: Path) -> None:
        self.importer = importer
        # The project files the facts read for the importer, to the depth they followed: its findings rest on
        # them (a cache entry of the importer is valid while they are unchanged). Filled by `training.origin`.
        self.used: Set[str] = set()
        self.lookup = Lookup()
        self._handed: Dict[Tuple[str, str, str], Optional[Tuple[ProjectModule, cst.FunctionDef]]] = {}
        self._wrapped: Dict[tuple, Optional[Wrapping]] = {}
        self._classes: Dict[Tuple[str, str], Optional[List[Tuple[str, str]]]] = {}
        self._callers: Dict[str, Optional[List[Tuple[str, CallSummary]]]] = {}
        self._handed_as_of = changes()

    def torch_pin(self) -> TorchPin:
        """The torch versions the project allows (`torchlint.project.pins`); the files read
        for it (a `requirements.txt`, naming torch or not) are ones the facts rest on. Read from the folders'
        and files' stamps each time: a long-lived process sees an edit."""
        from torchlint.project.index import project_root

        root = project_root(str(self.importer))
        pin = torch_pin(str(self.importer), root if os.path.exists(os.path.join(root, ".git")) else None)
        self.used.update(pin.files)
        return pin

    def _forget_if_changed(self) -> None:
        """A file of the project changed since the answers were kept (an edit in the editor): they may differ."""
        if self._handed_as_of != changes():
            self._handed.clear()
            self._classes.clear()
            self._wrapped.clear()
            self._callers.clear()
            self._handed_as_of = changes()

    @property
    def index(self) -> ProjectIndex:
        """The importer's project, indexed (`torchlint.project.index`): the index made last, which a long-lived
        process keeps up to date (a parsed module, and this with it, outlives many lints)."""
        return ProjectIndex.of(str(self.importer))

    def locate(self, level: int, dotted: str) -> Optional[Tuple[str, str]]:
        """(file, top-level name) an imported dotted name leads to in the project: `(0, util.misc.NativeScaler)`
        -> (`.../util/misc.py`, `NativeScaler`)."""
        parts = dotted.split(".")
        if len(parts) < 2:
            return None
        path = module_file(self.importer, ".".join(parts[:-1]), level, self.lookup)
        return (os.path.abspath(str(path)), parts[-1]) if path is not None else None

    def reexported(self, level: int, dotted: str) -> Optional[str]:
        """The qualified name of an installed package's object that an imported name of the project stands for
        when a file of the project only imports it again (`from ultralytics.utils.torch_utils import autocast as
        smart_amp_autocast` in `utils/torch_utils.py`, which `train.py` imports): `ultralytics.utils.torch_utils.
        autocast`. None for a name the project defines, or one it does not lead to."""
        importer = self.importer
        for _ in range(4):
            parts = dotted.split(".")
            if len(parts) < 2:
                return None
            path = module_file(importer, ".".join(parts[:-1]), level, self.lookup)
            summary = file_summary(os.path.abspath(str(path))) if path is not None else None
            if summary is None or parts[-1] not in summary.imports:
                return None
            self.used.add(os.path.abspath(str(path)))
            level, dotted = summary.imports[parts[-1]]
            importer = path
            if level == 0 and module_file(importer, dotted.rpartition(".")[0], 0, self.lookup) is None:
                return dotted  # it leads out of the project
        return None

    def carrier(self, path: str, name: str, method: Optional[str] = None
                ) -> Optional[Tuple[ProjectModule, cst.FunctionDef]]:
        """The top-level function `name` of the file `path`, or the method `method` of its class `name`, parsed,
        when the index says it runs a backward (`ProjectIndex.carries`); the file is then one the facts read."""
        if not self.index.carries(path, name, method):
            return None
        module = load(Path(path))
        if module is None:
            return None
        self.used.add(str(module.path))
        if method is None:
            found = module.definition(name)
            return (module, found) if isinstance(found, cst.FunctionDef) else None
        function = module.functions.method_of_class(name, method)
        return (module, function) if function is not None else None

    def handed(self, function: cst.FunctionDef, parameter: str, method: str
               ) -> Optional[Tuple[ProjectModule, cst.FunctionDef]]:
        """What an object that the importer's top-level `function` receives as `parameter` runs when called
        (`method` `__call__`) or when its method `method` is called by name (`updater.backward_step(...)`): that
        method of the one class of the project whose objects every call of `function` in the project passes for
        `parameter` (`main.py` builds `loss_scaler = NativeScaler()` and calls `train_one_epoch(..., loss_scaler)`),
        when the index says it runs a backward. None when no call is found, one passes something else or nothing
        (a default, `*args`), they pass objects of different classes, or the class's own body does not define
        the method (inherited: not followed): what the parameter holds, or runs, is then unknown. Every file read
        for the answer is one the facts rest on."""
        key = (function.name.value, parameter, method)
        self._forget_if_changed()
        if key not in self._handed:
            self._handed[key] = self._handed_class(function, parameter, method)
        return self._handed[key]

    def _handed_class(self, function: cst.FunctionDef, parameter: str, method: str
                      ) -> Optional[Tuple[ProjectModule, cst.FunctionDef]]:
        index = self.index
        params = function.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        keywords = positional + [p.name.value for p in params.kwonly_params]
        importer = os.path.abspath(str(self.importer))
        text = read_text(importer)
        handed = index.handoffs(importer, text).get(function.name.value, ()) if text is not None else ()
        if parameter not in keywords or not (
                parameter in handed or (parameter in positional and str(positional.index(parameter)) in handed)):
            return None  # no file of the project hands this parameter an object of a class with a method that backpropagates
        callers = index.callers(str(self.importer), function.name.value)
        if not callers:
            return None
        classes: Set[Tuple[str, str]] = set()
        for path, call in callers:
            self.used.add(path)
            argument = dict(call.keywords).get(parameter)
            if argument is None and parameter in positional and positional.index(parameter) < len(call.positional):
                argument = call.positional[positional.index(parameter)]
            if argument is None:
                return None  # not passed (the default), or passed through `*args`/`**kwargs`: unknown
            summary = file_summary(path)
            if summary is None:
                return None
            values: List[Optional[str]] = [argument.built] if argument.built is not None else (
                list(summary.objects_at(call, argument.name)) if argument.name is not None else [])
            if not values or None in values:
                return None
            for value in values:
                resolved = index.resolve(path, summary, value)
                if resolved is None:
                    return None
                classes.add(resolved)
        if len(classes) != 1:
            return None
        path, name = classes.pop()
        return self.carrier(path, name, method)

    def handed_classes(self, function: cst.FunctionDef, parameter: str) -> Optional[List[Tuple[str, str]]]:
        """(file, class) of the project's classes whose objects every call of the importer's top-level `function`
        in the project passes for `parameter`: `main.py` builds `model = MetaModel(...)` (moved, `.cuda()`, or
        wrapped, `model = DDP(model)`, `model = FSDP(model)`: the same module) and calls `train_one_epoch(model,
        ...)`. None when no call is found, the function is handed on as a value, a call passes something else
        or nothing (a default, `*args`), or a value is not an object of a class the project defines (a
        library's model, a factory's result, a parameter of the caller). Every file read is one the facts
        rest on."""
        key = (function.name.value, parameter)
        self._forget_if_changed()
        if key not in self._classes:
            self._classes[key] = self._handed_classes(function, parameter)
        return self._classes[key]

    def _project_calls(self, function: cst.FunctionDef, parameter: str) -> Optional[List[Tuple[str, CallSummary]]]:
        """The calls of `function` the project's files make, when `parameter` is one of its parameters; None when
        it is not or no call is found."""
        params = function.params
        if parameter not in [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]:
            return None
        name = function.name.value
        if name not in self._callers:
            self._callers[name] = self.index.callers(os.path.abspath(str(self.importer)), name)
        return self._callers[name] or None

    def _handed_classes(self, function: cst.FunctionDef, parameter: str) -> Optional[List[Tuple[str, str]]]:
        callers = self._project_calls(function, parameter)
        if callers is None or self.index.passed_as_value(os.path.abspath(str(self.importer)), function.name.value):
            return None
        positional = _positional(function)
        classes: Set[Tuple[str, str]] = set()
        for path, call in callers:
            self.used.add(path)
            argument = _passed(call, parameter, positional)
            summary = file_summary(path)
            if call.open_ended or argument is None or summary is None:
                return None
            values = (argument.built,) if argument.built is not None else (
                summary.objects_at(call, argument.name) if argument.name is not None else ())
            built = False
            for value in values:
                if value is None:
                    return None  # a parameter of the caller, a loop's target, an unpacking: not shown
                head, _, last = value.rpartition(".")
                if last in MODULE_WRAPPERS or last in HANDING_BACK or (
                        head == argument.name and last in SAME_MODULE_METHODS):
                    continue  # `DDP(model)`, `model.cuda()`: the module the name's other bindings build
                if last in LOADERS and head:
                    value = head  # `Net.from_pretrained(path)` builds a `Net`
                resolved = self._class_file(path, summary, value)
                if resolved is None:
                    return None  # a library's class, or a function of the project (a factory)
                classes.add(resolved)
                built = True
            if not built:
                return None
        return sorted(classes) or None

    def _class_file(self, path: str, summary: FileSummary, dotted: str) -> Optional[Tuple[str, str]]:
        """(file, class) of the project that the name `dotted` of the file `path` leads to, also through a package
        that imports it again (`from lm.meta import MetaModel` in `lm/__init__.py`); None for anything else."""
        index = self.index
        for _ in range(4):
            resolved = index.resolve(path, summary, dotted)
            target = file_summary(resolved[0]) if resolved is not None else None
            if target is None:
                return None
            if resolved[1] in target.classes:
                return resolved
            if resolved[1] not in target.imports:
                return None
            self.used.add(resolved[0])
            path, summary, dotted = resolved[0], target, resolved[1]
        return None

    def wrapped_by_callers(self, function: cst.FunctionDef, parameter: str, wrappers: FrozenSet[str],
                           needed: Optional[str] = None) -> Optional[Wrapping]:
        """Where the callers of the importer's top-level `function` wrap what they pass for `parameter` in one of
        `wrappers` (qualified names: `torch.nn.parallel.DistributedDataParallel`): every call of `function` in
        the project passes, there, a name bound to such a wrap before the call and not rebound to anything
        else between the two (`.to(device)` and the like keep the wrap; what runs after the call counts too when
        a loop holds it: `FileSummary.sites_at`), or the wrap itself. A wrap under a branch
        the call is not under (`if args.distributed:`) gives its condition. `needed`: a parameter whose
        default is `1` (an accumulation count): a call that leaves it out or passes `1` does not count. None
        when a call passes something else, the function is named other than in a call (handed on as a
        value), or no call counts: what the parameter holds is then unknown. Every file read is one the facts
        rest on."""
        key = (id(function), parameter, wrappers, needed)
        self._forget_if_changed()
        if key not in self._wrapped:
            self._wrapped[key] = self._wrapped_by_callers(function, parameter, wrappers, needed)
        return self._wrapped[key]

    def _wrapped_by_callers(self, function: cst.FunctionDef, parameter: str, wrappers: FrozenSet[str],
                            needed: Optional[str]) -> Optional[Wrapping]:
        callers = self._project_calls(function, parameter)
        if callers is None:
            return None
        params = function.params
        positional = _positional(function)
        for path, _ in callers:
            self.used.add(path)
        if not any(_wraps_somewhere(file_summary(path), wrappers) or self._calls_a_factory(path, wrappers)
                   for path in {path for path, _ in callers}):
            return None  # no caller's file wraps anything in them: the common case, answered without more reading
        if self.index.passed_as_value(os.path.abspath(str(self.importer)), function.name.value):
            return None
        skippable = needed is not None and any(
            p.name.value == needed and p.default is not None and _is_one(p.default)
            for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        found: List[Wrapping] = []
        for path, call in callers:
            self.used.add(path)
            if call.open_ended:
                return None
            if skippable:
                count = _passed(call, needed, positional)
                if count is None or count.literal == "1":
                    continue  # runs with one micro-batch a window: nothing accumulates
            argument = _passed(call, parameter, positional)
            summary = file_summary(path)
            is_wrap = functools.partial(self._wraps, path, summary, wrappers)
            wrap = _wrap_passed(path, summary, call, argument, is_wrap) if argument and summary else None
            if wrap is None:
                return None
            found.append(wrap)
        if not found:
            return None
        conditional = [wrap for wrap in found if wrap.condition is not None]
        return (conditional or found)[0]

    def _wraps(self, path: str, summary: FileSummary, wrappers: FrozenSet[str], callee: Optional[str]) -> bool:
        """A call of `callee` in the file `path` wraps in one of `wrappers`: it is one, or a factory of the
        project every `return` of which hands back such a wrap (`smart_DDP` of `utils/torch_utils.py`)."""
        if _qualified(summary, callee) in wrappers:
            return True
        target = self._factory_file(path, summary, callee, wrappers)
        module = load(Path(target[0])) if target is not None else None
        function = module.definition(target[1]) if module is not None else None
        if not isinstance(function, cst.FunctionDef):
            return False
        self.used.add(str(module.path))
        return module.functions.returns_calls_of(function, wrappers)

    def _factory_file(self, path: str, summary: FileSummary, callee: Optional[str], wrappers: FrozenSet[str]
                      ) -> Optional[Tuple[str, str]]:
        """(file, function) of the project that a call of `callee` in `path` runs, when that file wraps
        something in one of `wrappers` (read from the index alone: it may be a factory of them)."""
        resolved = self.index.resolve(path, summary, callee) if callee is not None else None
        if resolved is None:
            return None
        target = file_summary(resolved[0])
        if target is None or resolved[1] not in target.functions or not _wraps_somewhere(target, wrappers):
            return None
        return resolved

    def _calls_a_factory(self, path: str, wrappers: FrozenSet[str]) -> bool:
        """The file binds a name to a call of a function of the project that may wrap in one of `wrappers`."""
        summary = file_summary(path)
        if summary is None:
            return False
        callees = {site.value for sites in (summary.sites or {}).values() for site in sites
                   if site.value and site.value != NOTHING}
        return any(self._factory_file(path, summary, callee, wrappers) is not None for callee in callees)

    def definition(self, level: int, dotted: str, via: Optional[List[str]] = None
                   ) -> Optional[Tuple[ProjectModule, Definition]]:
        """The function or class an imported name leads to (`names.imported`), in a file of the project,
        also through a module that only imports it again (a package's `__init__.py`: `from .model import Net`,
        `from .model import *`); None for a name of an installed package or one the files do not define.
        `via` collects the files passed through."""
        importer = self.importer
        for _ in range(4):
            parts = dotted.split(".")
            for split in range(len(parts) - 1, 0, -1):  # the longest module path that is a file
                path = module_file(importer, ".".join(parts[:split]), level, self.lookup)
                if path is not None:
                    break
            else:
                return None
            module = load(path)
            if module is None:
                return None
            rest = ".".join(parts[split:])
            found = module.definition(rest)
            if found is not None:
                return module, found
            head, _, tail = rest.partition(".")
            again = module.names.imported(head) or _star_source(module, head, importer=path, lookup=self.lookup)
            if again is None:
                return None
            if via is not None:
                via.append(str(module.path))
            level, dotted = again[0], again[1] + (f".{tail}" if tail else "")
            importer = path
        return None

    def read_definition(self, target: Optional[Tuple[int, str]], used: Optional[Set[str]] = None
                        ) -> Optional[Tuple[ProjectModule, Definition]]:
        """`definition` of an imported name (`names.imported`'s answer; None reads nothing), recording the files
        it lives in and passes through among those the linted file's facts rest on: `used`, or this importer's
        own when the importer is the linted file."""
        via: List[str] = []
        found = self.definition(*target, via=via) if target is not None else None
        if found is not None:
            (self.used if used is None else used).update(via + [str(found[0].path)])
        return found


def _star_source(module: ProjectModule, name: str, importer: Path, lookup: Lookup) -> Optional[Tuple[int, str]]:
    """`(level, source.name)` for a `from .source import *` of `module` whose file of the project defines
    `name` at its top level: the import `name` comes in by."""
    for statement in module.module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.ImportFrom) or not isinstance(small.names, cst.ImportStar) \
                    or small.module is None:
                continue
            source = dotted_name(small.module)
            path = module_file(importer, source, len(small.relative), lookup) if source else None
            other = load(path) if path is not None else None
            if other is not None and other.definition(name) is not None:
                return len(small.relative), f"{source}.{name}"
    return None


def _wraps_somewhere(summary: Optional[FileSummary], wrappers: FrozenSet[str]) -> bool:
    """The file binds some name to one of `wrappers`, or calls one (unread: it may)."""
    if summary is None:
        return True
    return any(_qualified(summary, site.value) in wrappers for sites in (summary.sites or {}).values()
               for site in sites) or any(_qualified(summary, call.callee) in wrappers for call in summary.calls)


def _is_one(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Integer) and value.value == "1"


def _positional(function: cst.FunctionDef) -> List[str]:
    """The parameters of `function` that take positional arguments, in order."""
    return [p.name.value for p in (*function.params.posonly_params, *function.params.params)]


def _passed(call: CallSummary, parameter: str, positional: List[str]):
    """What `call` passes for `parameter` (an `index.Argument`), None when it passes nothing there."""
    argument = dict(call.keywords).get(parameter)
    if argument is None and parameter in positional and positional.index(parameter) < len(call.positional):
        argument = call.positional[positional.index(parameter)]
    return argument


def _qualified(summary: FileSummary, dotted: Optional[str]) -> Optional[str]:
    """A dotted name as the file's absolute imports spell it out (`DDP` -> `torch.nn.parallel.Distributed...`)."""
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    if head not in summary.imports:
        return dotted
    level, origin = summary.imports[head]
    if level:
        return None
    return f"{origin}.{rest}" if rest else origin


def _wrap_passed(path: str, summary: FileSummary, call: CallSummary, argument,
                 is_wrap: Callable[[Optional[str]], bool]) -> Optional[Wrapping]:
    """Where what `call` passes as `argument` was wrapped (`wrapped_by_callers`); `is_wrap` says whether a call
    of a callee (as the file writes it) wraps."""
    if argument.built is not None:
        if not is_wrap(argument.built):
            return None
        return Wrapping(path, call.line, call.scope, None)
    if argument.name is None:
        return None
    sites = summary.sites_at(call, argument.name)
    wraps = [site for site in sites if is_wrap(site.value)]
    if not wraps or any(site.line >= call.line for site in wraps):
        return None
    first = min(site.line for site in wraps)
    keeps = {f"{argument.name}.{method}" for method in SAME_MODULE_METHODS}
    if any(site.line > first and site not in wraps and site.value not in keeps for site in sites):
        return None  # rebound after the wrap: `model = model.module`, `model = ema`
    conditions = []
    for site in wraps:
        guards = _own_guards(site, call)
        if guards is None:
            return None
        conditions.append(guards)
    if any(not guards for guards in conditions):
        return Wrapping(path, wraps[0].line, call.scope, None)
    lasts = {guards[-1] for guards in conditions}
    if any(f"!{test}" in lasts for test in lasts):  # `if a:` wraps, and its `else:` too
        return Wrapping(path, wraps[0].line, call.scope, None)
    text = read_text(path) or ""
    return Wrapping(path, wraps[0].line, call.scope, " and ".join(guard_text(text, guard) for guard in conditions[0]))


def _own_guards(site: BindingSite, call: CallSummary) -> Optional[Tuple[str, ...]]:
    """The branches a wrap sits in that the call does not: () when it runs on every path to the call; None
    when one is not an `if` (a loop's body, an `except`: whether it ran is not a condition one can name)."""
    guards = [guard for guard in site.guards if guard]
    around = [guard for guard in call.guards if guard]
    common = 0
    while common < min(len(guards), len(around)) and guards[common] == around[common]:
        common += 1
    own = tuple(guards[common:])
    return None if any(guard.startswith("<") for guard in own) else own


def load(path: Path) -> Optional[ProjectModule]:
    """The file parsed, or None when it cannot be read or parsed or is too big to be worth it. A file open in
    the editor is read from its open text (`torchlint.project.index.set_open_text`)."""
    absolute = os.path.abspath(str(path))
    if open_text(absolute) is None:
        try:
            absolute = str(path.resolve())
        except (OSError, RuntimeError):
            return None
    stamp = file_stamp(absolute)
    if stamp is None or stamp[0] > _MAX_BYTES:
        return None
    return _load(absolute, stamp[1], stamp[0])


@functools.lru_cache(maxsize=128)
def _load(path: str, mtime_ns: int, size: int) -> Optional[ProjectModule]:
    if mtime_ns < 0:  # an open text
        text = read_text(path)
        if text is None:
            return None
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    try:
        module = parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    names = ModuleNames(module)
    names.project = ProjectFiles(Path(path))
    return ProjectModule(Path(path), module, names)


def _top_level(statements, name: str) -> Optional[Definition]:
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == name:
            return statement
    return None
