"""What any program analysis would know about a function, and nothing about PyTorch.

`cfg` builds a statement-level control-flow graph; `dataflow` computes
reaching definitions, "assigned on every path", "carried into the next
iteration", dominance and paths on it; `scopes` says which names in an
expression a comprehension or lambda binds for itself. The training-loop facts
(`torchlint.training`) ask these questions instead of comparing source order.
"""

from torchlint.flow.cfg import ControlFlowGraph, Definition, LoopRegion, Node
from torchlint.flow.dataflow import FunctionFlow, Iteration, Point

__all__ = ["ControlFlowGraph", "Definition", "FunctionFlow", "Iteration", "LoopRegion", "Node", "Point"]
