"""Property tests on generated programs: linting never crashes, fixing always parses, converges and is idempotent.

Two sources of programs: `hypothesmith` (random syntactically valid Python, which exercises the parser
paths and the prefilter, and, with a training loop appended, every rule on unusual surroundings) and a
strategy of our own that writes *training loops*: random mixes of backward calls, optimizer and scaler
steps, resets, schedulers, accumulation conditions, loss accumulators, carried hidden state, `no_grad`
blocks, nested in `if`/`with`/`try`, inside functions and methods, `for` and `while`.

CI runs a few examples per property; a long run sets `TORCHLINT_FUZZ_EXAMPLES` (e.g. 3000).
"""

from __future__ import annotations

import os
import textwrap

import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from torchlint.engine import lint_source
from torchlint.fix import fix_source
from torchlint.rules import ALL_RULES

hypothesmith = pytest.importorskip("hypothesmith")

# hypothesmith compiles what it generates, and CPython warns about code like `1()`.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

EXAMPLES = int(os.environ.get("TORCHLINT_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

# --- a strategy that writes training loops --------------------------------------------------------------

_OPTIMIZERS = ("optimizer", "opt", "self.optimizer", "optim_g")
_LOSSES = ("loss", "l", "batch_loss")
_ACCUM = ("accum", "4", "args.gradient_accumulation_steps", "self.accum_steps")


@st.composite
def _names(draw):
    return {
        "opt": draw(st.sampled_from(_OPTIMIZERS)),
        "loss": draw(st.sampled_from(_LOSSES)),
        "n": draw(st.sampled_from(_ACCUM)),
        "i": draw(st.sampled_from(("i", "step", "batch_idx"))),
        "total": draw(st.sampled_from(("total_loss", "running", "self.epoch_loss"))),
    }


def _simple(v, method: bool):
    """One-line statements a training loop body is made of."""
    o, l, n, i, t = v["opt"], v["loss"], v["n"], v["i"], v["total"]
    backward = [
        f"{l}.backward()",
        f"({l} / {n}).backward()",
        f"{l}.backward(retain_graph=True)",
        f"scaler.scale({l}).backward()",
        f"accelerator.backward({l})",
        f"torch.autograd.backward({l})",
        f"torch.autograd.backward([{l}, aux], retain_graph=True)",
        f"grads = torch.autograd.grad({l}, params, retain_graph=True)",
        f"{l}.backward(create_graph=True)",
        f"{t}.backward()",
    ]
    if method:
        backward.append(f"self.manual_backward({l})")
    forward = [
        f"{l} = criterion(model(x), y)",
        f"{l} = criterion(model(x), y) / {n}",
        f"{l} = model(**batch).loss",
        f"{l} = F.cross_entropy(model(x), y, reduction='sum')",
        f"{l} = {l} / {n}",
        f"{l} = {l} + criterion(out, y)",
        f"{l} += criterion(out, y)",
        "out = model(x)",
        f"{l} = criterion(out, y)",
        "out, hidden = model(x, hidden)",
        f"{l} = criterion(model(x).detach(), y)",
        f"{l}, aux = criterion(out, y), out.pow(2).mean()",
        f"{l} = sum(criterion(h, y) for h in heads)",
    ]
    other = [
        f"{o}.step()",
        f"scaler.step({o})",
        "scaler.update()",
        f"{o}.zero_grad()",
        f"{o}.zero_grad(set_to_none=True)",
        "model.zero_grad()",
        "scheduler.step()",
        "lr_scheduler.step()",
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        f"{t} += {l}",
        f"{t} += {l}.item()",
        f"{t} = {t} + {l}",
        f"{t} += {l}.detach()",
        f"losses.append({l})",
        f"losses.append({l}.item())",
        "hidden = hidden.detach()",
        "hidden = out",
        "counter += 1",
        f"{i} += 1",
        "counter = 0",
        f"print({l}.item())",
        "x, y = x.to(device), y.to(device)",
        "pass",
        "continue",
        "break",
        "for p in params: p.grad = None",
        f"del {l}",
        f"{o}.step(); {o}.zero_grad()",
        f"{l}.backward(); {o}.step()",
    ]
    return st.one_of(st.sampled_from(backward), st.sampled_from(forward), st.sampled_from(other))


def _conditions(v):
    i, n = v["i"], v["n"]
    return st.sampled_from((
        f"{i} % {n} == 0",
        f"({i} + 1) % {n} == 0",
        f"({i} + 1) % {n} == 0 or ({i} + 1) == len(loader)",
        f"{i} % {n} == {n} - 1",
        f"counter == {n}",
        f"counter % {n} == 0",
        f"{i} > 0 and {i} % {n} == 0",
        f"not ({i} + 1) % {n}",
        "is_last",
        f"{i} == len(loader) - 1",
        "True",
        f"{i} % {n}",
    ))


def _contexts():
    return st.sampled_from((
        "torch.no_grad()",
        "torch.enable_grad()",
        "autocast()",
        "torch.autocast('cuda', dtype=torch.bfloat16)",
        "accelerator.accumulate(model)",
        "torch.inference_mode()",
        "model.no_sync()",
        "torch.set_grad_enabled(False)",
    ))


@st.composite
def _block(draw, v, depth: int, method: bool, in_loop: bool = True):
    """A list of (indent level, text) lines: a non-empty block of statements."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("simple",) * 6 + (("if", "with", "try", "for", "while") if depth < 3 else ())))
        if kind == "simple":
            text = draw(_simple(v, method))
            if not in_loop and text in ("continue", "break"):
                text = "pass"
            lines.append((0, text))
        elif kind == "if":
            lines.append((0, f"if {draw(_conditions(v))}:"))
            lines += [(k + 1, s) for k, s in draw(_block(v, depth + 1, method, in_loop))]
            if draw(st.booleans()):
                lines.append((0, "else:"))
                lines += [(k + 1, s) for k, s in draw(_block(v, depth + 1, method, in_loop))]
        elif kind == "with":
            lines.append((0, f"with {draw(_contexts())}:"))
            lines += [(k + 1, s) for k, s in draw(_block(v, depth + 1, method, in_loop))]
        elif kind == "try":
            lines.append((0, "try:"))
            lines += [(k + 1, s) for k, s in draw(_block(v, depth + 1, method, in_loop))]
            lines.append((0, draw(st.sampled_from(("except RuntimeError:", "except Exception as error:", "finally:")))))
            lines += [(k + 1, s) for k, s in draw(_block(v, depth + 1, method, in_loop))]
        else:
            lines.append((0, draw(_loop_header(v, kind))))
            lines += [(k + 1, s) for k, s in draw(_block(v, depth + 1, method, True))]
    return lines


def _loop_header(v, kind: str):
    i = v["i"]
    if kind == "while":
        return st.sampled_from((f"while {i} < max_steps:", "while True:", "while not done:"))
    return st.sampled_from((
        "for x, y in loader:",
        f"for {i}, (x, y) in enumerate(loader):",
        f"for {i}, batch in enumerate(loader, start=1):",
        f"for {i}, batch in enumerate(tqdm(train_dataloader)):",
        f"for {i} in range(len(loader)):",
        "for chunk in chunks:",
        "for batch in loader:",
        "for epoch in range(epochs):",
        f"for {i}, (x, y) in enumerate(zip(xs, ys), 1):",
    ))


def _optional(draw, text: str):
    return [text] if draw(st.booleans()) else []


@st.composite
def _structured_body(draw, v, method: bool):
    """A loop body shaped like real ones (reset, forward, scale, backward, guarded step), then perturbed."""
    o, l, n, i, t = v["opt"], v["loss"], v["n"], v["i"], v["total"]
    chunks = []  # each chunk: a list of (indent, text) lines that moves as one
    reset = draw(st.sampled_from((f"{o}.zero_grad()", "model.zero_grad()", f"{o}.zero_grad(set_to_none=True)")))
    if draw(st.booleans()):
        chunks.append([(0, reset)])
    forward = draw(st.sampled_from((
        f"{l} = criterion(model(x), y)", f"{l} = model(**batch).loss", f"{l} = criterion(model(x), y) / {n}",
        f"{l} = F.mse_loss(model(x), y, reduction='sum')", f"out, hidden = model(x, hidden)\n{l} = criterion(out, y)",
    )))
    forward_lines = [(0, text) for text in forward.split("\n")]
    wrapper = draw(st.sampled_from((None, None, "autocast()", "torch.no_grad()", "accelerator.accumulate(model)")))
    if wrapper:
        forward_lines = [(0, f"with {wrapper}:")] + [(k + 1, text) for k, text in forward_lines]
    if draw(st.integers(0, 4)) == 0:  # partial losses summed over chunks
        chunks.append([(0, f"{l} = 0")])
        forward_lines = [(0, "for chunk in chunks:")] + [(k + 1, text.replace(f"{l} = ", f"{l} += ", 1))
                                                        for k, text in forward_lines]
        if draw(st.booleans()):
            forward_lines.append((1, draw(st.sampled_from((f"{l}.backward()", f"accelerator.backward({l})")))))
    chunks.append(forward_lines)
    if draw(st.booleans()):
        chunks.append([(0, draw(st.sampled_from((f"{l} = {l} / {n}", f"{l} /= {n}", f"{l} = {l} / len(chunks)"))))])
    backward = draw(st.sampled_from((
        f"{l}.backward()", f"scaler.scale({l}).backward()", f"accelerator.backward({l})",
        f"{l}.backward(retain_graph=True)", f"({l} / {n}).backward()",
    ) + ((f"self.manual_backward({l})",) if method else ())))
    chunks.append([(0, backward)])
    if draw(st.booleans()):
        chunks.append([(0, draw(st.sampled_from((f"{t} += {l}", f"{t} += {l}.item()", f"{t} = {t} + {l}",
                                                 f"losses.append({l})"))))])
    if draw(st.booleans()):
        chunks.append([(0, "hidden = hidden.detach()")] if draw(st.booleans()) else [(0, "hidden = out")])
    step = [draw(st.sampled_from((f"{o}.step()", f"scaler.step({o})\nscaler.update()")))]
    step = step[0].split("\n")
    step = _optional(draw, "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)") + step
    if draw(st.booleans()):
        step.insert(draw(st.integers(0, len(step))), reset)
    if draw(st.booleans()):
        step.append(draw(st.sampled_from(("scheduler.step()", "lr_scheduler.step()"))))
    if draw(st.booleans()):
        step.append("counter = 0")
    condition = draw(st.one_of(st.none(), _conditions(v)))
    if condition is None:
        chunks.append([(0, text) for text in step])
    else:
        chunks.append([(0, f"if {condition}:")] + [(1, text) for text in step])
    if draw(st.booleans()):
        chunks.append([(0, draw(st.sampled_from(("counter += 1", f"{i} += 1", "scheduler.step()", reset))))])
    # Perturb: a few swaps of neighbouring chunks.
    for _ in range(draw(st.integers(0, 2))):
        if len(chunks) > 1:
            k = draw(st.integers(0, len(chunks) - 2))
            chunks[k], chunks[k + 1] = chunks[k + 1], chunks[k]
    return [line for chunk in chunks for line in chunk]


_PRELUDES = (
    "import torch",
    "import torch.nn as nn",
    "import torch.nn.functional as F",
    "from torch.cuda.amp import GradScaler, autocast",
    "from accelerate import Accelerator",
    "from tqdm import tqdm",
)
_SETUP = (
    "{total} = 0.0",
    "{total} = 0",
    "{total} = torch.zeros(())",
    "losses = []",
    "hidden = None",
    "hidden = torch.zeros(1, 8, 16)",
    "counter = 0",
    "{i} = 0",
    "{opt}.zero_grad()",
    "scaler = GradScaler()",
    "accelerator = Accelerator(gradient_accumulation_steps=4)",
    "criterion = nn.CrossEntropyLoss()",
    "criterion = nn.MSELoss(reduction='sum')",
    "{opt} = torch.optim.AdamW(model.parameters(), lr=1e-4)",
    "scheduler = torch.optim.lr_scheduler.StepLR({opt}, 10)",
    "{loss} = 0",
)
_AFTER = (
    "{opt}.step()",
    "{opt}.zero_grad()",
    "{loss}.backward()",
    "{total}.backward()",
    "scheduler.step()",
    "print({total} / len(loader))",
)


@st.composite
def training_programs(draw):
    """Source text of a module holding one or more generated training loops."""
    v = draw(_names())
    wrap = draw(st.sampled_from(("module", "function", "method")))
    method = wrap == "method"
    body = []
    for _ in range(draw(st.integers(0, 3))):
        body.append((0, draw(st.sampled_from(_SETUP)).format(**v)))
    outer = draw(st.booleans())
    if outer:
        body.append((0, draw(st.sampled_from(("for epoch in range(epochs):", "while epoch < epochs:")))))
    loop_kind = draw(st.sampled_from(("for",) * 4 + ("while",)))
    header = draw(_loop_header(v, loop_kind))
    base = 1 if outer else 0
    body.append((base, header))
    for _ in range(draw(st.integers(0, 2))):
        body.append((base + 1, draw(st.sampled_from(_SETUP)).format(**v)))
    # A training loop needs a backward; the generated block usually has one, and gets one if not.
    loop_body = draw(st.one_of(_block(v, 0, method), _structured_body(v, method)))
    if not any("backward" in text or "grad(" in text for _, text in loop_body):
        # before a statement of the block, not before the `else:`/`except ...:`/`finally:` that goes on one
        goes_on = ("else:", "elif ", "except", "finally:")
        boundaries = [k for k, (level, text) in enumerate(loop_body)
                      if level == 0 and not text.startswith(goes_on)] + [len(loop_body)]
        loop_body.insert(draw(st.sampled_from(boundaries)), (0, f"{v['loss']}.backward()"))
    body += [(base + 1 + k, s) for k, s in loop_body]
    for _ in range(draw(st.integers(0, 2))):
        body.append((0, draw(st.sampled_from(_AFTER)).format(**v)))
    if wrap != "module" and draw(st.booleans()):
        body.append((0, f"return {v['total']}"))

    indent = draw(st.sampled_from(("    ", "  ", "\t")))
    newline = draw(st.sampled_from(("\n",) * 3 + ("\r\n",)))
    lines = [line for line in draw(st.sets(st.sampled_from(_PRELUDES), max_size=4))]
    lines.sort()
    if wrap == "module":
        lines += [indent * k + s for k, s in body]
    elif wrap == "function":
        lines.append("def train(model, loader, epochs, accum, args, device, max_steps):")
        lines += [indent * (k + 1) + s for k, s in body]
    else:
        lines += ["class Trainer:", f"{indent}def train_epoch(self, model, loader, epochs):"]
        lines += [indent * (k + 2) + s for k, s in body]
    text = newline.join(lines)
    if draw(st.booleans()):
        text += newline
    return text


def _parses(text: str) -> bool:
    try:
        cst.parse_module(text)
    except Exception:  # noqa: BLE001
        return False
    return True


# --- the properties -------------------------------------------------------------------------------------


def check_lint(source: str) -> list:
    diagnostics, problems = lint_source(source, "fuzz.py", ALL_RULES)
    assert problems == [], problems[0].message + "\n" + problems[0].detail
    return diagnostics


def check_fix(source: str, unsafe: bool) -> None:
    outcome = fix_source(source, "fuzz.py", ALL_RULES, unsafe=unsafe)
    assert outcome.problems == [], outcome.problems[0].detail
    assert outcome.dropped == [], [(d.code, d.line, reason) for d, reason in outcome.dropped]
    assert _parses(outcome.source)
    assert outcome.converged, [(d.code, d.line, d.message) for d in outcome.remaining if d.fixable(unsafe)]
    assert not [d for d in check_lint(outcome.source) if d.fixable(unsafe)]
    again = fix_source(outcome.source, "fuzz.py", ALL_RULES, unsafe=unsafe)
    assert again.source == outcome.source, "fixing twice changed the code the second time"


@FUZZ
@given(training_programs())
def test_generated_training_loops_lint_without_internal_errors(source):
    assert _parses(source), source
    check_lint(source)


@FUZZ
@given(training_programs(), st.booleans())
def test_fixing_generated_training_loops_parses_converges_and_is_idempotent(source, unsafe):
    check_fix(source, unsafe)


@FUZZ
@given(hypothesmith.from_grammar(), st.sampled_from(("module", "loop body", "function")))
def test_random_python_never_crashes_the_linter(noise, where):
    check_lint(noise)
    # The prefilter skips most random code: put a backward next to it, or make it a training loop's body.
    if where == "module":
        source = noise.rstrip("\\ \t\r\n") + "\nloss.backward()\n"
    else:
        body = textwrap.indent(noise, "    ") + "\n    loss.backward()\n"
        source = f"for batch in loader:\n{body}"
        if where == "function":
            source = "def train(loader):\n" + textwrap.indent(source, "    ")
    assume(_parses(source))
    check_lint(source)
    check_fix(source, unsafe=True)


@FUZZ
@given(hypothesmith.from_node(), training_programs(), st.booleans())
def test_training_loops_among_random_python_lint_and_fix_cleanly(noise, loop, unsafe):
    source = noise.rstrip() + "\n" + loop if noise.strip() else loop
    assume(_parses(source))
    check_lint(source)
    check_fix(source, unsafe)


# --- minimised cases the fuzzer found -------------------------------------------------------------------

REGRESSIONS = [
    # TL006 moved the only statement of a `with` block away, leaving the block empty: the fix did not parse.
    """
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        with torch.no_grad():
            model.zero_grad()
        optimizer.step()
    """,
    # TL004 judged the inner loop's `i % accum == 0` by the outer loop's `i` (1-based) as well as by its own
    # (0-based): one rewrote it to `(i + 1) % accum`, the other back, and fixing never converged.
    """
    for i, (x, y) in enumerate(loader, start=1):
        (criterion(model(x), y) / accum).backward()
        for i in range(len(chunks)):
            (criterion(model(x), y) / accum).backward()
            if i % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    """,
]


@pytest.mark.parametrize("source", REGRESSIONS)
@pytest.mark.parametrize("unsafe", [False, True])
def test_regressions_found_by_fuzzing(source, unsafe):
    source = textwrap.dedent(source)
    check_lint(source)
    check_fix(source, unsafe)
