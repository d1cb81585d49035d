"""The rule registry: one module per rule, one `ALL_RULES` tuple.

A rule is a class with its code, name, severity, docstring (the rule's
documentation, in five fixed sections) and its own valid/invalid examples,
which one generic test runs. Whether a rule can fix is derived from its
examples, never declared by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Iterable, Iterator, Optional, Sequence, Tuple, Type

import libcst as cst

from torchlint.context import FileContext
from torchlint.model import Fix
from torchlint.registry import RULE_NAMES, SYNTAX_ERROR, check_selectors, code_of, rule_url, select_codes

__all__ = ["ALL_RULES", "SYNTAX_ERROR", "check_selectors", "rule_by_selector", "rules_by_codes",
           "select_rules"]


@dataclass(frozen=True)
class Example:
    """Code a rule must flag at `line` (1-based); `fixed` is what its fix makes of it."""

    code: str
    line: int
    fixed: Optional[str] = None
    unsafe: bool = False


@dataclass(frozen=True)
class Finding:
    """What a rule reports; the engine turns it into a positioned Diagnostic."""

    node: cst.CSTNode
    message: str
    fix: Optional[Fix] = None
    severity: Optional[str] = None
    timeline: Optional[str] = None  # what the loop does on a concrete run (`torchlint.training.timeline`)
    # The loop the finding is about, where several loops reach its place (a helper they all call): the engine
    # names that one as the caller, not the first loop that calls the helper.
    loop: Optional[object] = field(default=None, compare=False, repr=False)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    summary: ClassVar[str]
    severity_text: ClassVar[Optional[str]] = None  # when a finding's severity can differ from `severity`
    valid: ClassVar[Tuple[str, ...]] = ()
    invalid: ClassVar[Tuple[Example, ...]] = ()

    def check(self, context: FileContext) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def fixable(cls) -> bool:
        return any(example.fixed is not None for example in cls.invalid)

    @classmethod
    def fix_applicability(cls) -> Optional[str]:
        """"safe", "unsafe", "mixed" (safe in some cases, unsafe in others), or None (no fix)."""
        kinds = {example.unsafe for example in cls.invalid if example.fixed is not None}
        if not kinds:
            return None
        if len(kinds) == 2:
            return "mixed"
        return "unsafe" if True in kinds else "safe"

    @classmethod
    def url(cls) -> Optional[str]:
        return rule_url(cls.code)


def _all_rules() -> Tuple[Type[Rule], ...]:
    from torchlint.rules.backward_in_loss_loop import BackwardInLossLoop
    from torchlint.rules.backward_under_no_grad import BackwardUnderNoGrad
    from torchlint.rules.carried_graph_state import CarriedGraphState
    from torchlint.rules.ddp_accumulation_without_no_sync import DdpAccumulationWithoutNoSync
    from torchlint.rules.double_loss_scaling import DoubleLossScaling
    from torchlint.rules.loss_history_accumulation import LossHistoryAccumulation
    from torchlint.rules.missing_zero_grad import MissingZeroGrad
    from torchlint.rules.non_scalar_backward import NonScalarBackward
    from torchlint.rules.off_by_one_step import OffByOneStep
    from torchlint.rules.retain_graph_leak import RetainGraphLeak
    from torchlint.rules.scaler_misuse_in_accumulation import ScalerMisuseInAccumulation
    from torchlint.rules.scheduler_step_order import SchedulerStepOrder
    from torchlint.rules.step_between_retained_backwards import StepBetweenRetainedBackwards
    from torchlint.rules.token_mean_under_accumulation import TokenMeanUnderAccumulation
    from torchlint.rules.trailing_accumulation_window import TrailingAccumulationWindow
    from torchlint.rules.unscaled_accumulated_loss import UnscaledAccumulatedLoss
    from torchlint.rules.zero_grad_before_step import ZeroGradBeforeStep
    from torchlint.rules.zero_grad_every_microbatch import ZeroGradEveryMicrobatch

    rules = (
        BackwardInLossLoop, MissingZeroGrad, UnscaledAccumulatedLoss, OffByOneStep, RetainGraphLeak,
        ZeroGradBeforeStep, ZeroGradEveryMicrobatch, LossHistoryAccumulation, SchedulerStepOrder,
        TrailingAccumulationWindow, BackwardUnderNoGrad, CarriedGraphState, DoubleLossScaling,
        ScalerMisuseInAccumulation, StepBetweenRetainedBackwards, DdpAccumulationWithoutNoSync,
        TokenMeanUnderAccumulation, NonScalarBackward,
    )
    return tuple(sorted(rules, key=lambda rule: rule.code))


ALL_RULES: Tuple[Type[Rule], ...] = _all_rules()
if tuple((rule.code, rule.name) for rule in ALL_RULES) != RULE_NAMES:
    raise ImportError("torchlint.registry.RULE_NAMES does not match the rule classes")
_BY_CODE = {rule.code: rule for rule in ALL_RULES}


def rules_by_codes(codes: Iterable[str]) -> Tuple[Type[Rule], ...]:
    return tuple(_BY_CODE[code] for code in codes)


def select_rules(
    select: Optional[Sequence[str]] = None,
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
) -> Tuple[Type[Rule], ...]:
    """Rules chosen by codes, code prefixes (`TL00`) or names; see `torchlint.registry.select_codes`."""
    return rules_by_codes(select_codes(select, ignore, extend_select))


def rule_by_selector(selector: str) -> Optional[Type[Rule]]:
    code = code_of(selector)
    return _BY_CODE[code] if code is not None else None
