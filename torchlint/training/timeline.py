"""What an accumulation loop does on a concrete run: after which micro-batches the optimizer steps.

The step's window condition (`i % N == 0`, `(i + 1) % N == 0 or i + 1 == len(loader)`,
`if i % N != 0: continue`) is evaluated for each micro-batch of a run, with the counter's real
start and the values the code gives: `N` when it is a number in the code (or a constant before
the loop), the number of micro-batches when the iterable's length is known. Otherwise the run
uses stated example values (N = 4, 10 micro-batches), and says so. A flag the `if` tests
(`if not is_accumulating:`) is evaluated from the condition assigned to it; a condition that
reads anything else (a name the loop computes otherwise) is not simulated: no timeline then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from torchlint.names import ModuleNames, dotted_name, int_value
from torchlint.training.windows import AccumulationCheck, LoopCounter, known_length

EXAMPLE_COUNT = 4
EXAMPLE_LENGTH = 10


@dataclass(frozen=True)
class Run:
    """The micro-batches (1-based) after which the step runs, on a run of `length` micro-batches."""

    count: int
    length: int
    steps: Tuple[int, ...]
    count_text: str  # `N = 4`, or `accum_steps = 4, an example value`
    length_text: str  # `10 micro-batches`, or `an example run of 10 micro-batches`

    @property
    def windows(self) -> Tuple[int, ...]:
        sizes, last = [], 0
        for step in self.steps:
            sizes.append(step - last)
            last = step
        return tuple(sizes)

    @property
    def left_over(self) -> int:
        return self.length - (self.steps[-1] if self.steps else 0)

    def describe(self) -> str:
        """`steps after micro-batches 1, 5, 9 — windows of 1, 4, 4 (+1 left over)`."""
        if not self.steps:
            return f"never steps: all {self.length} micro-batches left over"
        text = f"steps after micro-batches {listing(self.steps)} — windows of {listing(self.windows)}"
        return text + (f" (+{self.left_over} left over)" if self.left_over else "")

    def expected(self) -> "Run":
        """Windows of N micro-batches, the last partial one stepped too."""
        steps = tuple(range(self.count, self.length + 1, self.count))
        if not steps or steps[-1] != self.length:
            steps += (self.length,)
        return Run(self.count, self.length, steps, self.count_text, self.length_text)

    def header(self) -> str:
        return f"timeline ({self.count_text}; {self.length_text})"

    def lines(self, expected: Optional[str] = None) -> str:
        """The two lines a finding shows: what the loop does, and what it should do."""
        should = expected if expected is not None else self.expected().describe()
        return f"{self.header()}: {self.describe()}\nexpected: {should}"


def listing(numbers: Tuple[int, ...], most: int = 6) -> str:
    """`1, 5, 9`, or `4, 8, 12, 16, 20, …, 40` for a long run; `none` for no step at all."""
    if not numbers:
        return "none"
    if len(numbers) <= most:
        return ", ".join(str(n) for n in numbers)
    return ", ".join(str(n) for n in numbers[:most - 1]) + f", …, {numbers[-1]}"


def simulate(check: AccumulationCheck, counter: LoopCounter, first: int, names: ModuleNames,
             known: Callable[[str], Optional[cst.BaseExpression]], on_step: bool = False) -> Optional[Run]:
    """The run of `check`'s condition, `first` being the counter's value on the first micro-batch;
    `on_step`: the counter advances only when the step runs (`global_step += 1` in its branch)."""
    if check.kind != "modulo" or counter.endless:
        return None
    count = int_value(check.count)
    count_code = cst.Module([]).code_for_node(check.count)
    if count is not None:
        count_text = f"N = {count}"
    else:
        resolved = int_value(known(check.count.value)) if isinstance(check.count, cst.Name) else None
        count = resolved if resolved is not None and resolved > 1 else EXAMPLE_COUNT
        count_text = f"{count_code} = {count}" + ("" if resolved is not None and resolved > 1 else ", an example value")
    if count <= 1:
        return None
    length = known_length(counter.iterable, names, known)
    length_text = f"{length} micro-batches"
    if length is None:
        length = EXAMPLE_LENGTH
        length_text = f"an example run of {length} micro-batches"
    if length <= 0 or length > 10_000:
        return None
    bindings: Dict[str, int] = {}
    if isinstance(check.count, (cst.Name, cst.Attribute)):
        bindings[count_code] = count
    steps: List[int] = []
    value = first
    for index in range(length):
        bindings[check.counter if on_step else counter.name] = value if on_step else first + index
        if check.flag is not None:  # `if not is_accumulating:`, `is_accumulating = i % N != 0`
            bindings.pop(check.flag, None)
            held = _evaluate(check.held, bindings, length)
            if held is not None:
                bindings[check.flag] = held
        holds = _evaluate(check.guard.test, bindings, length)
        if holds is None:
            return None
        if bool(holds) != check.guard.negated:
            steps.append(index + 1)
            value += 1
    return Run(count, length, tuple(steps), count_text, length_text)


def _evaluate(node: cst.BaseExpression, bindings: Dict[str, int], length: int) -> Optional[int]:
    """The value of an integer/boolean expression over the bound names and `len(...)`, else None."""
    if isinstance(node, cst.Integer):
        return int_value(node)
    name = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    if name is not None:
        if name in ("True", "False"):
            return int(name == "True")
        return bindings.get(name)
    if isinstance(node, cst.Call):
        return length if dotted_name(node.func) == "len" and len(node.args) == 1 else None
    if isinstance(node, cst.UnaryOperation):
        inner = _evaluate(node.expression, bindings, length)
        if inner is None:
            return None
        if isinstance(node.operator, cst.Not):
            return int(not inner)
        return -inner if isinstance(node.operator, cst.Minus) else None
    if isinstance(node, cst.BooleanOperation):
        left = _evaluate(node.left, bindings, length)
        right = _evaluate(node.right, bindings, length)
        if left is None or right is None:
            return None
        return int(bool(left) and bool(right)) if isinstance(node.operator, cst.And) else int(bool(left) or bool(right))
    if isinstance(node, cst.BinaryOperation):
        left = _evaluate(node.left, bindings, length)
        right = _evaluate(node.right, bindings, length)
        operation = _ARITHMETIC.get(type(node.operator))
        if left is None or right is None or operation is None:
            return None
        try:
            return operation(left, right)
        except ZeroDivisionError:
            return None
    if isinstance(node, cst.Comparison):
        left = _evaluate(node.left, bindings, length)
        for target in node.comparisons:
            right = _evaluate(target.comparator, bindings, length)
            compare = _COMPARISONS.get(type(target.operator))
            if left is None or right is None or compare is None:
                return None
            if not compare(left, right):
                return 0
            left = right
        return 1
    return None


_ARITHMETIC = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Modulo: lambda a, b: a % b, cst.FloorDivide: lambda a, b: a // b,
}
_COMPARISONS = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b,
}
