"""What one parsed file offers the rules: the module, its names, its loops, positions, edits.

Built once per file by the engine and shared by every rule.
"""

from __future__ import annotations

import os
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple
from pathlib import Path

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from torchlint.training import BackwardSite, Site, StepSite, TrainingLoop, find_training_loops
from torchlint.model import SAFE, Edit, Fix
from torchlint.names import ModuleNames
from torchlint.project.files import ProjectFiles
from torchlint.text import one_line, split_lines
from torchlint.walk import children


# What lies between a module and its statements: compound statements and their blocks and clauses.
_BLOCK_PARTS = (cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
                cst.Finally, cst.MatchCase)


class _Crossing(NamedTuple):
    """A site that a loop's call runs in another function (`torchlint.training.calls`)."""

    loop: TrainingLoop
    site: Site
    lines: Tuple[int, int]  # of its statement in that function
    function_lines: Tuple[int, int]  # of that function


class FileContext:
    def __init__(self, path: str, source: str, module: cst.Module,
                 statement_lines: Optional[List[int]] = None, program: Optional[str] = None,
                 trainers: Optional[FrozenSet[str]] = None) -> None:
        """`statement_lines`: the first line of each of `module.body`'s statements, if known (from CPython's tree).
        `program`: the code `module` was parsed from, when it is not `source` (the sparse program,
        `torchlint.sparse`: the same lines, some of them blanked). `trainers`: the names a loop's call must be
        spelled with for the loop to train, as the screen found them (`engine.Screened`); None: not known."""
        self.path = path
        self.source = source
        self.module = module
        self._program = source if program is None else program
        self.lines: List[str] = split_lines(source)
        self.newline = module.default_newline
        self.names = ModuleNames(module)
        if path not in ("", "-") and Path(path).is_file():
            self.names.project = ProjectFiles(Path(path))
        self.loops: List[TrainingLoop] = find_training_loops(module, self.names, source, trainers)
        self._positions = None
        self._statement_lines = statement_lines if statement_lines and len(statement_lines) == len(module.body) else None
        self._scoped: dict = {}  # id of a statement -> the ranges of its nodes
        self._unplaced: set = set()  # ids of the statements whose code is not known to occur once (`_placed`)
        self._lone_cr: Optional[bool] = None
        self._parents: dict = {}  # id of a module-level statement -> `_parents_in` it
        self._offsets: Optional[dict] = None
        self._sole: Optional[set] = None
        self._crossing: Optional[List[_Crossing]] = None
        self._elsewhere_positions: dict = {}
        self._hook_resets: Optional[list] = None

    @property
    def hook_resets(self) -> list:
        """Optimizer resets in the Lightning hooks that run between a backward and the step
        (`torchlint.training.frameworks.hook_resets`)."""
        if self._hook_resets is None:
            from torchlint.training.frameworks import hook_resets

            lightning = "on_after_backward" in self.source or "on_before_optimizer_step" in self.source
            self._hook_resets = hook_resets(self.module, self.names) if lightning else []
        return self._hook_resets

    # --- positions -----------------------------------------------------------------

    def _position(self, node: cst.CSTNode) -> CodeRange:
        """The node's CodeRange, resolving only the module-level statement that holds it.

        Position resolution costs about ten times a code generation, so it runs on
        the loop-holding statements alone, each as a module of its own, shifted by
        the lines before it, and only on the one that holds the node; a node
        outside them falls back to the whole module.
        """
        for positions in self._scoped.values():
            if node in positions:
                return positions[node]
        for top in self._loop_statements():
            if id(top) not in self._scoped and id(node) in self._parents_in(top):
                return self._innermost_positions(top, node)[node]
        for top in self._loop_statements():  # a layout node (a parenthesis) the walk does not list
            positions = self._statement_positions(top)
            if node in positions:
                return positions[node]
        if self._positions is None:
            self._positions = positions_of(self.module)
        return self._positions[node]

    def _parents_in(self, top: cst.CSTNode) -> Dict[int, Optional[cst.CSTNode]]:
        """id of each node of `top` (as `preorder` lists them) -> its parent (None for `top`)."""
        parents = self._parents.get(id(top))
        if parents is None:
            parents = self._parents[id(top)] = {id(top): None}
            stack = [top]
            while stack:
                current = stack.pop()
                for child in children(current):
                    parents[id(child)] = current
                    stack.append(child)
        return parents

    def _innermost_positions(self, top: cst.CSTNode, node: cst.CSTNode) -> "Positions":
        """The ranges of the innermost statement around `node` (in the module-level statement `top`) whose code
        occurs once in the program, at the start of a line: generated alone, with the indentation of the
        blocks around it, and moved down to where its code is. Its code is where it is, so where it occurs
        once it is there. A code generation of a line or a block, where `top` may be a class of a thousand
        lines; `top` itself when no statement inside it is known to be alone."""
        parents = self._parents_in(top)
        current: Optional[cst.CSTNode] = node
        while current is not None and current is not top:
            parent = parents[id(current)]
            # (a statement placed already holds the node, and `_position` found it there)
            if type(parent) is cst.IndentedBlock and id(current) not in self._unplaced:
                placed = self._placed(current, parents)
                if placed is not None:
                    return placed
                self._unplaced.add(id(current))
            current = parent
        return self._statement_positions(top)

    def _placed(self, statement: cst.CSTNode, parents: Dict[int, Optional[cst.CSTNode]]) -> Optional["Positions"]:
        if self._lone_cr is None:  # LibCST counts a lone `\r` as a line break: the search below does not
            self._lone_cr = "\r" in self._program.replace("\r\n", "")
        if self._lone_cr:
            return None
        indents: List[str] = []
        around = parents[id(statement)]
        while around is not None:
            if type(around) is cst.IndentedBlock:
                indents.append(self.module.default_indent if around.indent is None else around.indent)
            around = parents[id(around)]
        indents.reverse()
        spans: Dict[int, Tuple[int, int, int, int]] = {}
        state = _PositionState(default_indent=self.module.default_indent, default_newline=self.module.default_newline,
                               provider=None, spans=spans)
        state.indent_tokens = indents
        try:
            statement._codegen(state)
        except (AttributeError, TypeError):  # a LibCST whose code generation differs: the whole of `top`
            return None
        line = _sole_line(self._program, "".join(state.tokens))
        if line is None:
            return None
        positions = self._scoped[id(statement)] = Positions(statement, spans, line - 1)
        return positions

    def _loop_statements(self) -> List[cst.CSTNode]:
        tops: List[cst.CSTNode] = []
        for loop in self.loops:
            if loop.top_statement is not None and all(loop.top_statement is not top for top in tops):
                tops.append(loop.top_statement)
        return tops

    def _statement_positions(self, top: cst.CSTNode) -> "Positions":
        cached = self._scoped.get(id(top))
        if cached is None:
            before_lines = self._lines_before(top)
            alone = self.module.with_changes(body=(top,), header=(), footer=())
            cached = self._scoped[id(top)] = positions_of(alone, before_lines)
        return cached

    def _lines_before(self, top: cst.CSTNode) -> int:
        """How many lines precede a module-level statement (one code generation for all of them)."""
        if self._offsets is None and self._statement_lines is not None:
            # The line a statement's first token is on, less the blank and comment lines LibCST gives it.
            self._offsets = {id(statement): line - 1 - len(getattr(statement, "leading_lines", ()))
                             for statement, line in zip(self.module.body, self._statement_lines)}
        if self._offsets is None:
            self._offsets = {}
            lines = len(self.module.header)
            for statement in self.module.body:
                self._offsets[id(statement)] = lines
                lines += len(split_lines(self.module.code_for_node(statement)))
        return self._offsets[id(top)]

    def span(self, node: cst.CSTNode) -> Tuple[int, int, int, int]:
        """(line, column, end_line, end_column), 1-based columns, end exclusive."""
        code_range = self._position(node)
        return (code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def quote(self, node: cst.CSTNode) -> str:
        """`node`'s code on one line, for a message (`one_line`)."""
        return one_line(self.code(node))

    def source_of(self, node: cst.CSTNode) -> str:
        """The file's own lines that `node` spans (whatever the parse left out of the module, `torchlint.sparse`)."""
        line, _, end_line, _ = self.span(node)
        return "".join(self.lines[line - 1:end_line])

    def indent_of(self, node: cst.CSTNode) -> str:
        line = self.lines[self._position(node).start.line - 1]
        return line[: len(line) - len(line.lstrip(" \t"))]

    # --- loops that span functions (`torchlint.training.calls`) ------------------------

    def _crossings(self) -> List["_Crossing"]:
        """Each site a loop's call runs in another function, with its loop and the lines of its statement
        there and of that function."""
        if self._crossing is None:
            self._crossing = []
            for loop in self.loops:
                for site in (*loop.backwards, *loop.steps):
                    if site.via is not None and site.via.elsewhere is None:
                        line, _, end_line, _ = self.span(site.via.statement)
                        first, _, last, _ = self.span(site.via.function)
                        self._crossing.append(_Crossing(loop, site, (line, end_line), (first, last)))
        return self._crossing

    def crosses_functions(self, fix: Optional[Fix]) -> bool:
        """`fix` edits a function that a loop calls, for a finding about that loop: its names may not be
        that function's (`accum` of the caller), and other callers would change too."""
        if fix is None or not self._crossings():
            return False
        # An insertion on the line after the function's last one lands in its body too.
        return any(crossing.function_lines[0] <= edit.end_line and edit.line <= crossing.function_lines[1] + 1
                   for edit in fix.edits for crossing in self._crossings())

    def where_the_rest_runs(self, node: cst.CSTNode, about: Optional[TrainingLoop] = None,
                            also: Sequence[TrainingLoop] = ()) -> Optional[str]:
        """For a finding that spans functions, where its other half lives: said at a called function's
        line, where the loop that calls it is (`about`, the loop the finding is about, when it says; else the
        first that reaches it; `also`, other loops the same finding holds for); said in the loop, which
        function runs its backward or step."""
        crossings = self._crossings()
        frameworks = [loop for loop in self.loops if loop.framework is not None]
        elsewhere = self._elsewhere()
        if not crossings and not frameworks and not elsewhere:
            return None
        line = self.span(node)[0]
        inner = any(loop.framework is None and self.span(loop.node)[0] <= line <= self.span(loop.node)[2]
                    for loop in self.loops) if frameworks else False
        for loop in frameworks if not inner else ():
            start, _, end, _ = self.span(loop.function)
            if start <= line <= end:
                name = loop.function.name.value
                caller = {"ignite": "Ignite's `Engine` calls it once per iteration",
                          "method": "a loop of this file calls it on every iteration, and what it keeps from one "
                                    "call to the next lives in the object's attributes",
                          "speechbrain": "SpeechBrain's `Brain.fit()` calls it once per batch, after adding 1 to "
                                         "`self.step`"}.get(
                    loop.framework, "Lightning calls it once per batch under manual optimisation")
                return f"(`{name}()` is the loop's body here: {caller}.)"
        for crossing in crossings:
            if crossing.lines[0] <= line <= crossing.lines[1] and (about is None or crossing.loop is about):
                via = crossing.site.via
                caller, calls = self._calls_from(crossing, crossings)
                if len(calls) == 1:
                    text = f"`{via.name}()` runs this on every call; {caller} calls it at line {calls[0]}, " \
                           f"once per iteration"
                else:
                    text = f"`{via.name}()` runs this on every call; {caller} calls it at lines {_and(calls)}"
                others = []
                for loop in also:
                    other = next((c for c in crossings if c.loop is loop and c.loop is not crossing.loop
                                  and c.lines == crossing.lines and c.site.via.function is via.function), None)
                    if other is not None:
                        name, lines = self._calls_from(other, crossings)
                        said = f"{name} (line{'s' if len(lines) > 1 else ''} {_and(lines)})"
                        if said not in others:
                            others.append(said)
                return text + (f"; so does {_and(others)}." if others else ".")
        for loop in self.loops:
            if loop.framework is not None or not self.span(loop.node)[0] <= line <= self.span(loop.node)[2]:
                continue
            parts = []
            for crossing in crossings:
                if crossing.loop is loop:
                    site = crossing.site
                    text = f"`{self.code(site.node)}` runs in `{site.via.name}()` (line {self.span(site.node)[0]}), " \
                           f"called at line {self.span(site.via.call)[0]}"
                    if text not in parts:
                        parts.append(text)
            parts += [text for text in self._elsewhere_texts(loop) if text not in parts]
            if parts:
                return "; ".join(parts[:2]) + "."
        return None

    def _calls_from(self, crossing: "_Crossing", crossings: List["_Crossing"]) -> Tuple[str, List[int]]:
        """(how the loop is named, "the loop in `test()`"; the lines of its calls of the function that runs the
        crossing's site)."""
        via, function = crossing.site.via, crossing.loop.function
        caller = f"the loop in `{function.name.value}()`" if function is not None else "the loop"
        calls = sorted({self.span(other.site.via.call)[0] for other in crossings
                        if other.loop is crossing.loop and other.lines == crossing.lines
                        and other.site.via.function is via.function})
        return caller, calls

    def _elsewhere(self) -> List[Site]:
        """The sites the loops' calls run in other files of the project (`training.calls`)."""
        return [site for loop in self.loops for site in (*loop.backwards, *loop.steps) if site.elsewhere]

    def _elsewhere_texts(self, loop: TrainingLoop) -> List[str]:
        """For each call of `loop` that runs a backward or a step in another file: what it runs there and
        where, `loss_scaler()` runs the backward and steps when `update_grad` is true (util/misc.py:257)."""
        calls: Dict[int, List[Site]] = {}
        for site in (*loop.backwards, *loop.steps):
            if site.elsewhere:
                calls.setdefault(id(site.via.call), []).append(site)
        texts = []
        for sites in calls.values():
            via = sites[0].via
            done = []
            if any(isinstance(site, BackwardSite) for site in sites):
                done.append("the backward")
            for site in sites:
                if isinstance(site, StepSite):
                    step = "steps" if site.via.parameter is None else (
                        f"steps when `{site.via.parameter}` is {'true' if site.via.condition[1] else 'false'}")
                    if step not in done:
                        done.append(step)
            callee = self.code(via.call.func)
            text = f"`{callee}()` runs {' and '.join(done)} ({self._where(via)})"
            if text not in texts:  # the same call on both branches of an `if` (a `no_sync()` one and the other)
                texts.append(text)
        return texts

    def _where(self, via) -> str:
        """`util/misc.py:257`: the file of a function of another file (from the linted file's folder) and its line."""
        module = via.elsewhere
        if getattr(module, "framework", None):
            return f"{module.framework}, inherited"
        positions = self._elsewhere_positions.get(id(module))
        if positions is None:
            positions = self._elsewhere_positions[id(module)] = positions_of(module.module)
        line = positions[via.function.name].start.line
        folder = os.path.dirname(os.path.abspath(self.path))
        return f"{Path(os.path.relpath(str(module.path), folder)).as_posix()}:{line}"

    # --- edits ---------------------------------------------------------------------

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        """Replace an expression, the parentheses around it included."""
        line, column, end_line, end_column = self.span(node)
        lpar, rpar = getattr(node, "lpar", ()), getattr(node, "rpar", ())
        if lpar and rpar:
            line, column = self.span(lpar[0])[:2]
            end_line, end_column = self.span(rpar[-1])[2:]
        return Edit(line, column, end_line, end_column, content)

    def delete_lines(self, node: cst.CSTNode) -> Edit:
        """Remove the whole lines `node` spans, its trailing comment and newline included.

        The only statement of a block becomes `pass`: an empty block would not parse.
        """
        line, _, end_line, _ = self.span(node)
        if id(node) in self._sole_statements():
            return Edit(line, 1, end_line + 1, 1, f"{self.indent_of(node)}pass{self.newline}")
        return Edit(line, 1, end_line + 1, 1, "")

    def _sole_statements(self) -> set:
        """ids of the statements that are alone in their indented block (one statement-level walk)."""
        if self._sole is None:
            self._sole = set()
            pending: List[cst.CSTNode] = list(self.module.body)
            while pending:
                node = pending.pop()
                if isinstance(node, cst.IndentedBlock) and len(node.body) == 1:
                    self._sole.add(id(node.body[0]))
                pending.extend(child for child in node.children if isinstance(child, _BLOCK_PARTS))
        return self._sole

    def insert_line_before(self, node: cst.CSTNode, text: str) -> Edit:
        line = self.span(node)[0]
        return Edit(line, 1, line, 1, f"{self.indent_of(node)}{text}{self.newline}")

    def insert_line_after(self, node: cst.CSTNode, text: str, indent: Optional[str] = None) -> Edit:
        """A new line after the last line of `node`, indented like `node` unless told."""
        end_line = self.span(node)[2]
        indent = self.indent_of(node) if indent is None else indent
        if end_line >= len(self.lines) and not self.lines[-1].endswith(("\n", "\r")):
            last = self.lines[-1]
            return Edit(end_line, len(last) + 1, end_line, len(last) + 1, f"{self.newline}{indent}{text}")
        return Edit(end_line + 1, 1, end_line + 1, 1, f"{indent}{text}{self.newline}")

    def move_after(self, site: Site, anchor: Site, title: str, applicability: str = SAFE) -> Optional[Fix]:
        """A fix that moves `site`'s statement to just after `anchor`'s, into its block.

        None when either statement shares its line with another one (`a(); b()`).
        """
        if not (site.on_own_line and anchor.on_own_line):
            return None
        moved = self.code(site.node)
        return Fix(applicability, title,
                   (self.delete_lines(site.statement), self.insert_line_after(anchor.statement, moved)))

    def move_before(self, site: Site, anchor: Site, title: str, applicability: str = SAFE) -> Optional[Fix]:
        """A fix that moves `site`'s statement to just before `anchor`'s, into its block.

        None when either statement shares its line with another one (`a(); b()`).
        """
        if not (site.on_own_line and anchor.on_own_line):
            return None
        moved = self.code(site.statement.body[0])  # the statement alone, without its comment
        return Fix(applicability, title, (self.delete_lines(site.statement),
                                          self.insert_line_before(anchor.statement, moved)))

    def last_line_of(self, node: cst.CSTNode) -> int:
        return self.span(node)[2]

    def site_line(self, site: Site) -> int:
        return self.span(site.node)[0]

    def site_code(self, site: Site) -> str:
        """How a message quotes a site: its code, or for one that a call of the loop runs in another file of the
        project, that call (`loss_scaler(...)`; `where_the_rest_runs` says what it runs there)."""
        if site.elsewhere:
            return f"{self.code(site.via.call.func)}(...)"
        return self.code(site.node)


def _sole_line(program: str, code: str) -> Optional[int]:
    """The line at whose start `code` occurs in `program`, and ends a line there, if it occurs so once."""
    if not code:
        return None
    found = None
    at = program.find(code)
    while at >= 0:
        end = at + len(code)
        if (at == 0 or program[at - 1] == "\n") and (code[-1] in "\r\n" or end == len(program)
                                                     or program[end] in "\r\n"):
            if found is not None:
                return None
            found = at
        at = program.find(code, at + 1)
    return None if found is None else program.count("\n", 0, found) + 1


def positions_of(module: cst.Module, offset: int = 0) -> "Positions":
    """Every node's range, as LibCST's `PositionProvider` gives it, at a fraction of its cost.

    `MetadataWrapper.resolve(PositionProvider)` walks the whole tree with a
    visitor before generating its code, and builds two frozen dataclasses per
    node under a generator-based context manager. Here only the code generation
    runs, and it records plain tuples; a `CodeRange` is built for the few
    nodes asked for. The ranges are the same (tests/test_context.py compares
    them). A LibCST whose code generation does not fit this falls back to its
    own provider.
    """
    spans: Dict[int, Tuple[int, int, int, int]] = {}
    try:
        module._codegen(_PositionState(default_indent=module.default_indent, default_newline=module.default_newline,
                                       provider=None, spans=spans))
    except (AttributeError, TypeError):
        resolved = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        spans = {id(node): (r.start.line, r.start.column, r.end.line, r.end.column) for node, r in resolved.items()}
    return Positions(module, spans, offset)


class Positions:
    """Node -> CodeRange, `offset` lines further down than where they were generated."""

    def __init__(self, module: cst.Module, spans: Dict[int, Tuple[int, int, int, int]], offset: int) -> None:
        self._module = module  # keeps every node alive, so no id is reused while the spans are
        self._spans = spans
        self._offset = offset

    def __contains__(self, node: cst.CSTNode) -> bool:
        return id(node) in self._spans

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        line, column, end_line, end_column = self._spans[id(node)]
        return CodeRange(CodePosition(line + self._offset, column), CodePosition(end_line + self._offset, end_column))


class _PositionState(PositionProvidingCodegenState):
    """LibCST's position-recording code generation state, recording (line, column, end line, end column)."""

    def __init__(self, *, spans: Dict[int, Tuple[int, int, int, int]], **fields: object) -> None:
        super().__init__(**fields)
        self.spans = spans
        self.starts: List[Tuple[int, int]] = []

    def _update_position(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            super()._update_position(value)
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self.starts.pop()
        if id(node) not in self.spans:  # a range recorded inside the node's own generation stands
            self.spans[id(node)] = (line, column, self.line, self.column)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> "_Syntactic":
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """`with state.record_syntactic_position(node, ...)`: the node's range without its surrounding whitespace."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _PositionState, node: cst.CSTNode, start_node: Optional[cst.CSTNode],
                 end_node: Optional[cst.CSTNode]) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc_info: object) -> None:
        state = self.state
        spans = state.spans
        start = spans[id(self.start_node)][:2] if self.start_node is not None else self.start
        end = spans[id(self.end_node)][2:] if self.end_node is not None else (state.line, state.column)
        spans[id(self.node)] = start + end


def _and(items: Sequence[object]) -> str:
    """`298`, `298 and 299`, `1, 2 and 3`."""
    words = [str(item) for item in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" and {words[-1]}"
