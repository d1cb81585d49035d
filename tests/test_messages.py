"""What findings say: true findings whose words must not mislead (the corpus checks where they are)."""

from __future__ import annotations

from pathlib import Path
from typing import List

from torchlint.engine import lint_source
from torchlint.rules import ALL_RULES

CORPUS = Path(__file__).resolve().parent / "corpus"


def _findings(name: str, code: str) -> List:
    path = CORPUS / name
    diagnostics, problems = lint_source(path.read_text(encoding="utf-8"), str(path), ALL_RULES)
    assert not problems
    return [d for d in diagnostics if d.code == code]


def test_a_trailing_window_of_a_loop_that_is_the_whole_run_is_lost_not_carried_into_a_next_epoch() -> None:
    (finding,) = _findings("tl010_bug_whole_run_loop.py", "TL010")
    assert "whole run" in finding.message
    assert "next epoch" not in finding.message


def test_a_trailing_window_inside_an_epoch_loop_leaks_into_the_next_epoch() -> None:
    (finding,) = _findings("tl010_bug_deepspeed_flags_plain_optimizer.py", "TL010")
    assert "leak into the next epoch's first update" in finding.message


def test_no_len_fix_for_a_loader_over_an_iterable_dataset() -> None:
    (finding,) = _findings("tl010_bug_streaming_dataset_no_len.py", "TL010")
    assert finding.fix is None
    assert "has no length" in finding.message and "after the loop" in finding.message


def test_a_len_fix_for_a_loader_of_a_map_style_dataset() -> None:
    (finding,) = _findings("tl010_bug_whole_run_loop.py", "TL010")
    assert finding.fix is not None and "len(loader)" in finding.fix.message


def test_two_backwards_before_the_steps_each_on_its_own_parameters() -> None:
    (finding,) = _findings("tl015_bug_actor_steps_first.py", "TL015")
    assert "run both backwards before stepping, each on its own parameters" in finding.message


def test_a_multi_line_step_condition_is_quoted_on_one_line_without_its_comments() -> None:
    (finding,) = _findings("tl016_bug_multiline_step_condition.py", "TL016")
    assert "`(step + 1) % accum == 0 or step + 1 == len(loader)`" in finding.message
    assert "#" not in finding.message and "\n" not in finding.message


def test_an_off_by_one_window_on_a_resumable_counter_names_the_fresh_run() -> None:
    (finding,) = _findings("tl004_bug_resumed_global_step.py", "TL004")
    assert "the first micro-batch of a fresh run" in finding.message


def test_the_item_a_loss_history_message_suggests_is_code_that_runs() -> None:
    """`loss * images.size(0).item()` would call `.item()` on an int: the suggestion is parenthesised, as the fix."""
    (finding,) = _findings("tl008_bug_weighted_by_batch.py", "TL008")
    assert "Accumulate `(loss * images.size(0)).item()` instead." in finding.message


def test_a_ddp_wrap_in_the_function_around_an_engine_update_says_where_and_when() -> None:
    (finding,) = _findings("tl016_bug_engine_update_closure_ddp.py", "TL016")
    assert "wrapped in `DistributedDataParallel` by `train()` (line 12) when `args.distributed` is set" \
        in finding.message


def test_a_short_epoch_flush_condition_is_quoted_on_one_line_and_an_inherited_backward_named_once() -> None:
    (finding,) = _findings("tl010_bug_hf_trainer_copied_loop_short_epoch_flush.py", "TL010")
    assert "\n" not in finding.message and "#" not in finding.message
    assert finding.message.count("runs the backward") == 1


def test_a_reset_helper_defined_but_not_called_before_the_loop_throws_nothing_away() -> None:
    (finding,) = _findings("tl010_bug_reset_helper_defined_before_loop.py", "TL010")
    assert "whole run" in finding.message
    assert "thrown away" not in finding.message


def test_a_mean_loss_a_method_of_the_file_returns_unnamed_is_named_by_the_call_the_loop_makes() -> None:
    """`train_step` returns `model(samples)["loss"]`, which names no loss function: the message names
    `self.train_step`, where the user looks for the loss, as it does for a function of another file."""
    (finding,) = _findings("tl003_bug_loss_from_a_method_that_calls_the_model.py", "TL003")
    assert "a mean over each micro-batch (`self.train_step`)" in finding.message
