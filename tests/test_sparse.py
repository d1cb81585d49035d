"""The sparse parse of a script: a loop of the module's own code reads all of that code and the functions it
names that the analysis follows; the rest of the file is left out, and the findings are those of a whole parse."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_findings
from torchlint.engine import Screened, screen

SCRIPT = textwrap.dedent(
    """\
    import torch

    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accum = 4


    def reset(opt):
        opt.zero_grad(set_to_none=True)


    def plot_curves(history):
        import matplotlib.pyplot as plt
        plt.plot(history)
        plt.savefig("curves.png")


    history = []
    for i in range(10):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            {reset}
        history.append(loss.item())
    plot_curves(history)
    """
)


def test_a_script_loop_keeps_its_code_and_the_helpers_it_calls_and_leaves_out_the_rest(monkeypatch):
    monkeypatch.delenv("TORCHLINT_NO_PREFILTER", raising=False)
    screened = screen(SCRIPT.format(reset="reset(optimizer)"), "train.py")
    assert isinstance(screened, Screened)
    kept = screened.program
    assert "opt.zero_grad(set_to_none=True)" in kept  # a helper the analysis follows for the reset
    assert "if (i + 1) % accum == 0:" in kept and "history.append(loss.item())" in kept  # the script's code
    assert 'plt.savefig("curves.png")' not in kept  # a function that neither trains nor resets
    assert kept.count("\n") == SCRIPT.count("\n")  # every finding keeps its line


@pytest.mark.parametrize("reset", ["reset(optimizer)", "pass"], ids=["reset in a helper", "no reset"])
def test_a_script_loop_gives_the_findings_of_a_whole_parse(monkeypatch, reset):
    text = SCRIPT.format(reset=reset)
    sparse = lint_findings(text, monkeypatch, whole=False)
    assert sparse == lint_findings(text, monkeypatch, whole=True)
    assert any(code == "TL003" for code, *_ in sparse)  # the undivided loss, in both
    assert any(code == "TL002" for code, *_ in sparse) == (reset == "pass")  # the helper's reset is seen
