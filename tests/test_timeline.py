"""Accumulation findings show what the loop does on a concrete run, simulated from its window condition."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.engine import lint_source
from torchlint.rules import ALL_RULES


def timelines(source: str) -> dict:
    diagnostics, problems = lint_source(textwrap.dedent(source), "train.py", ALL_RULES)
    assert not problems
    return {d.code: d.timeline for d in diagnostics}


def test_a_step_on_the_first_micro_batch_of_each_window():
    found = timelines("""\
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / 4).backward()
            if i % 4 == 0:
                optimizer.step()
                optimizer.zero_grad()
    """)
    expected = ("timeline (N = 4; an example run of 10 micro-batches): steps after micro-batches 1, 5, 9 — "
                "windows of 1, 4, 4 (+1 left over)\n"
                "expected: steps after micro-batches 4, 8, 10 — windows of 4, 4, 2")
    assert found["TL004"] == expected and found["TL010"] == expected


def test_the_length_of_a_loader_of_known_size_and_a_count_from_a_constant():
    found = timelines("""\
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        ACCUM = 3
        loader = DataLoader(TensorDataset(torch.randn(70, 4), torch.randn(70, 1)), batch_size=10)
        for step, (x, y) in enumerate(loader, start=1):
            (criterion(model(x), y) / ACCUM).backward()
            if step % ACCUM == 0:
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert found == {"TL010": (
        "timeline (ACCUM = 3; 7 micro-batches): steps after micro-batches 3, 6 — windows of 3, 3 (+1 left over)\n"
        "expected: steps after micro-batches 3, 6, 7 — windows of 3, 3, 1")}


def test_a_mean_loss_summed_over_each_window():
    found = timelines("""\
        for i, (x, y) in enumerate(loader):
            criterion(model(x), y).backward()
            if (i + 1) % 8 == 0 or (i + 1) == len(loader):
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert found["TL003"] == (
        "timeline (N = 8; an example run of 10 micro-batches): steps after micro-batches 8, 10 — windows of 8, 2\n"
        "expected: each loss divided by 8, so each step applies its window's mean gradient "
        "(undivided: 8×, 2× a micro-batch's)")


@pytest.mark.parametrize("condition, steps", [
    ("(i + 1) % accum != 0", "steps after micro-batches 4, 8 — windows of 4, 4 (+2 left over)"),
    ("i % accum", "steps after micro-batches 1, 5, 9 — windows of 1, 4, 4 (+1 left over)"),
])
def test_a_step_skipped_with_continue(condition, steps):
    found = timelines(f"""\
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            if {condition}:
                continue
            optimizer.step()
            optimizer.zero_grad()
    """)
    assert found["TL010"].startswith(
        f"timeline (accum = 4, an example value; an example run of 10 micro-batches): {steps}\n")


def test_reset_every_micro_batch_and_scheduler_every_micro_batch():
    found = timelines("""\
        import torch
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(loader) // 4 * epochs)
        for i, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            (criterion(model(x), y) / 4).backward()
            scheduler.step()
            if (i + 1) % 4 == 0 or i + 1 == len(loader):
                optimizer.step()
    """)
    assert found["TL007"] == (
        "timeline (N = 4; an example run of 10 micro-batches): steps after micro-batches 4, 8, 10, but the "
        "gradients are reset before every micro-batch: each step applies 1 micro-batch\n"
        "expected: steps after micro-batches 4, 8, 10 — windows of 4, 4, 2, each step applying its whole window")
    assert found["TL009"] == (
        "timeline (N = 4; an example run of 10 micro-batches): the scheduler steps after every micro-batch "
        "(10 times), the optimizer after micro-batches 4, 8, 10 (3 times)\n"
        "expected: both after micro-batches 4, 8, 10")


def test_no_timeline_where_the_condition_reads_what_a_run_cannot_give():
    found = timelines("""\
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / 4).backward()
            if i % 4 == 0 and not frozen(model):
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert "TL004" in found and found["TL004"] is None


def test_no_window_where_a_further_condition_may_fail_on_a_boundary():
    # `skipped(i)` may hold on some window's last micro-batch: the step then waits, and the windows are not
    # 4 micro-batches; what they are the code does not say
    found = timelines("""\
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / 4).backward()
            if i % 4 == 0 and not skipped(i):
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert "TL004" not in found


def test_findings_outside_accumulation_have_no_timeline():
    found = timelines("""\
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """)
    assert found == {"TL002": None}


def test_clip_every_micro_batch_and_ddp_all_reduce_every_micro_batch():
    found = timelines("""\
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(net)
        for i, (x, y) in enumerate(loader):
            scaler.scale(criterion(model(x), y) / 4).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if (i + 1) % 4 == 0 or i + 1 == len(loader):
                scaler.unscale_(optimizer)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
    """)
    assert found["TL014"] == (
        "timeline (N = 4; an example run of 10 micro-batches): the clip runs after every micro-batch (10 times), "
        "the optimizer steps after micro-batches 4, 8, 10 (3 times)\n"
        "expected: the clip after micro-batches 4, 8, 10 only, right before each step")
    assert found["TL016"] == (
        "timeline (N = 4; an example run of 10 micro-batches): the gradients are all-reduced after every "
        "micro-batch (10 times), the optimizer steps after micro-batches 4, 8, 10 (3 times)\n"
        "expected: all-reduces after micro-batches 4, 8, 10 only (3 times)")


def test_scaler_update_every_micro_batch_of_a_known_run():
    found = timelines("""\
        ACCUM = 3
        for step in range(12):
            scaler.scale(criterion(model(x), y) / ACCUM).backward()
            if (step + 1) % ACCUM == 0:
                scaler.step(optimizer)
                optimizer.zero_grad()
            scaler.update()
    """)
    assert found["TL014"] == (
        "timeline (ACCUM = 3; 12 micro-batches): the scaler update runs after every micro-batch (12 times), "
        "the optimizer steps after micro-batches 3, 6, 9, 12 (4 times)\n"
        "expected: the scaler update after micro-batches 3, 6, 9, 12 only, after each step")


def test_clipping_scaled_gradients_without_accumulation_has_no_timeline():
    found = timelines("""\
        import torch
        for x, y in loader:
            scaler.scale(criterion(model(x), y)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    """)
    assert found == {"TL014": None}


def test_a_token_mean_divided_by_the_window_count():
    found = timelines("""\
        import torch.nn.functional as F
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x).view(-1, 50), y.view(-1), ignore_index=-100) / 4
            loss.backward()
            if (i + 1) % 4 == 0 or (i + 1) == len(loader):
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert found == {"TL017": (
        "timeline (N = 4; an example run of 10 micro-batches): steps after micro-batches 4, 8, 10 — windows of 4, 4, 2\n"
        "expected: each micro-batch's summed loss divided by its window's token count, so each step applies the "
        "window's token mean (divided by 4: every micro-batch weighs 1/4 of it, whatever its tokens)")}


def test_a_loss_divided_again_by_the_framework_shows_the_framework_windows():
    found = timelines("""\
        from accelerate import Accelerator
        accelerator = Accelerator(gradient_accumulation_steps=8)
        for batch in loader:
            with accelerator.accumulate(model):
                accelerator.backward(model(**batch).loss / 8)
                optimizer.step()
                optimizer.zero_grad()
    """)
    assert found == {"TL013": (
        "timeline (N = 8; an example run of 10 micro-batches): steps after micro-batches 8, 10 — windows of 8, 2\n"
        "expected: each loss divided once, by Accelerate, so each step applies its window's mean gradient "
        "(divided twice: 1/8 of it)")}
