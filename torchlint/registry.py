"""Rule codes and names, and rule selection, without importing the rules.

Choosing rules, validating `--select`, keying the cache and linking to a
rule's page happen on every run, including runs where every file is a cache
hit or fails the prefilter; none of them needs LibCST. `torchlint.rules`
checks at import that this table matches its rule classes.
"""

from __future__ import annotations

import functools
from typing import Dict, Iterable, Optional, Sequence, Tuple

# TL000 is not a rule module: the engine reports files that do not parse.
SYNTAX_ERROR = ("TL000", "syntax-error")

RULE_NAMES: Tuple[Tuple[str, str], ...] = (
    ("TL001", "backward-in-loss-loop"),
    ("TL002", "missing-zero-grad"),
    ("TL003", "unscaled-accumulated-loss"),
    ("TL004", "off-by-one-accumulation-step"),
    ("TL005", "retain-graph-leak"),
    ("TL006", "zero-grad-before-step"),
    ("TL007", "zero-grad-every-microbatch"),
    ("TL008", "loss-history-accumulation"),
    ("TL009", "scheduler-step-order"),
    ("TL010", "trailing-accumulation-window"),
    ("TL011", "backward-under-no-grad"),
    ("TL012", "carried-graph-state"),
    ("TL013", "double-loss-scaling"),
    ("TL014", "scaler-misuse-in-accumulation"),
    ("TL015", "step-between-retained-backwards"),
    ("TL016", "ddp-accumulation-without-no-sync"),
    ("TL017", "token-mean-under-accumulation"),
    ("TL018", "non-scalar-backward"),
)


def rule_url(code: str) -> Optional[str]:
    """The web page of a rule (TL000 included): the package's `Documentation` URL and `TL003.md`; None without one."""
    return rule_urls().get(code)


def rule_urls() -> Dict[str, str]:
    """Every rule's web page (TL000's too), by code; empty when the package metadata names no `Documentation`."""
    base = project_url("Documentation")
    return {code: f"{base.rstrip('/')}/{code}.md" for code, _ in (SYNTAX_ERROR,) + RULE_NAMES} if base else {}


def project_url(label: str) -> Optional[str]:
    """The URL `[project.urls]` in pyproject.toml gives under `label`, as the installed package's metadata
    holds it; None when there is none, or no metadata (torchlint run from a source tree never installed)."""
    from importlib import metadata  # 30 ms: only the SARIF report and the language server ask

    try:
        entries = metadata.metadata("torchlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        name, _, url = entry.partition(",")
        if name.strip().lower() == label.lower() and url.strip():
            return url.strip()
    return None


def select_codes(
    select: Optional[Sequence[str]] = None,
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
) -> Tuple[str, ...]:
    """Codes chosen by codes, code prefixes (`TL00`) or names, in code order."""
    return _selected(None if select is None else tuple(select), tuple(ignore), tuple(extend_select))


@functools.lru_cache(maxsize=256)  # asked for every file a walk finds, nearly always with the same selectors
def _selected(select: Optional[Tuple[str, ...]], ignore: Tuple[str, ...], extend_select: Tuple[str, ...]
              ) -> Tuple[str, ...]:
    chosen = [code for code, name in RULE_NAMES if select is None or _matches_any(code, name, select)]
    for code, name in RULE_NAMES:
        if _matches_any(code, name, extend_select) and code not in chosen:
            chosen.append(code)
    names = dict(RULE_NAMES)
    return tuple(sorted(code for code in chosen if not _matches_any(code, names[code], ignore)))


def check_selectors(selectors: Iterable[str]) -> None:
    """Raise ValueError naming the first selector that matches no rule."""
    for selector in selectors:
        if selector.upper() in ("ALL", SYNTAX_ERROR[0]) or selector == SYNTAX_ERROR[1]:
            continue
        if not any(_matches(code, name, selector) for code, name in RULE_NAMES):
            raise ValueError(f"unknown rule selector `{selector}`")


def code_of(selector: str) -> Optional[str]:
    """The code a single rule's code or name stands for."""
    for code, name in RULE_NAMES:
        if code == selector.upper() or name == selector:
            return code
    return None


def _matches_any(code: str, name: str, selectors: Iterable[str]) -> bool:
    return any(_matches(code, name, selector) for selector in selectors)


def _matches(code: str, name: str, selector: str) -> bool:
    selector = selector.strip()
    upper = selector.upper()
    if upper == "ALL":
        return True
    return name == selector or (bool(selector) and code.startswith(upper) and upper.startswith("TL"))
