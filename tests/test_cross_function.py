"""Loops that span functions (`torchlint.training.calls`), and window conditions held in a flag or in a
counter that only advances on a step: what a user sees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"


def run(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "torchlint", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def findings(path: Path):
    result = run(path, "--output-format", "json", "--no-cache")
    return json.loads(result.stdout)


def test_a_backward_in_a_method_is_reported_where_it_is_and_says_which_loop_calls_it():
    (finding,) = findings(CORPUS / "tl003_bug_method_training_step.py")
    assert (finding["code"], finding["line"]) == ("TL003", 17)
    assert "`training_step()` runs this on every call; the loop in `fit()` calls it at line 23" in finding["message"]
    # The fix would edit `training_step` for its caller's loop: it is not offered.
    assert finding["fix"] is None
    assert "steps after micro-batches 4, 8" in finding["timeline"]


def test_a_finding_in_the_loop_says_where_the_backward_runs(tmp_path):
    (finding,) = findings(CORPUS / "tl004_bug_counter_advances_on_step_method.py")
    assert "`loss.backward()` runs in `training_step()` (line 16), called at line 21." in finding["message"]


def test_fix_leaves_a_called_function_alone(tmp_path):
    target = tmp_path / "trainer.py"
    source = (CORPUS / "tl003_bug_method_training_step.py").read_text(encoding="utf-8")
    target.write_text(source, encoding="utf-8")
    result = run("--fix", "--unsafe-fixes", target, "--no-cache")
    assert result.returncode == 1
    assert target.read_text(encoding="utf-8") == source


def test_a_helper_that_divides_its_returned_loss_is_quiet():
    assert findings(CORPUS / "tl003_trap_helper_compute_loss_divides.py") == []


def test_a_step_flag_shows_its_timeline_and_names_the_flag():
    codes = {f["code"]: f for f in findings(CORPUS / "tl004_bug_step_flag.py")}
    assert set(codes) == {"TL004", "TL010"}
    assert "runs when `not is_accumulating` (`is_accumulating = i % (batch_size // micro_batch_size) != 0`)" \
        in codes["TL004"]["message"]
    (undivided,) = findings(CORPUS / "tl003_bug_step_flag_undivided.py")  # `if sync_now:`, a 1-based flag
    assert "steps after micro-batches 4, 8, 10 — windows of 4, 4, 2" in undivided["timeline"]


def test_a_counter_of_steps_stops_the_steps_and_the_timeline_shows_it():
    (finding,) = findings(CORPUS / "tl004_bug_counter_advances_on_step.py")
    assert "`global_step` advances only when it steps (`global_step += int(should_step)`, line 18)" \
        in finding["message"]
    assert "steps after micro-batches 1 — windows of 1 (+9 left over)" in finding["timeline"]
    assert finding["fix"] is None


def test_no_fix_inserts_the_callers_names_into_a_called_function(tmp_path):
    """TL002's fix would put `optimizer.zero_grad()` (the caller's name) into `train_step`, whose optimizer
    is `opt`: not offered, not written."""
    (finding,) = findings(CORPUS / "tl002_bug_function_train_step.py")
    assert finding["code"] == "TL002" and finding["fix"] is None
    target = tmp_path / "train.py"
    source = (CORPUS / "tl002_bug_function_train_step.py").read_text(encoding="utf-8")
    target.write_text(source, encoding="utf-8")
    run("--fix", "--unsafe-fixes", target, "--no-cache")
    assert target.read_text(encoding="utf-8") == source


def test_sites_one_call_runs_keep_the_order_of_the_called_function():
    """`update()` steps the optimizer, then the scheduler (also through a second method): in that order,
    though both are recorded at the loop's call."""
    import libcst as cst

    from torchlint.names import ModuleNames
    from torchlint.training.loop import find_training_loops

    source = (CORPUS / "tl009_trap_update_method_order.py").read_text(encoding="utf-8")
    module = cst.parse_module(source)
    (loop,) = find_training_loops(module, ModuleNames(module))
    (optimizer_step,) = loop.optimizer_steps
    (scheduler_step,) = loop.scheduler_steps
    assert optimizer_step.point == scheduler_step.point
    assert loop.dominates(optimizer_step, scheduler_step) and loop.precedes(optimizer_step, scheduler_step)
    assert not loop.dominates(scheduler_step, optimizer_step) and not loop.precedes(scheduler_step, optimizer_step)
    assert findings(CORPUS / "tl009_bug_helper_scheduler_first.py")[0]["line"] == 8


def test_a_helper_several_loops_call_is_reported_for_the_loop_that_carries_and_says_what_carries():
    # test_save_and_load and test_generate call `_backprop()` once on a model built in the iteration (quiet);
    # test_backpropagation calls it twice on one model: only there does a step apply gradients of another call.
    (finding,) = findings(CORPUS / "tl002_bug_helper_twice_on_fresh_model_among_loops.py")
    assert (finding["code"], finding["line"]) == ("TL002", 17)
    message = finding["message"]
    assert "the loop in `test_backpropagation()` calls it at lines 36 and 37." in message
    assert "calls it twice on that model and nothing resets the gradients between the calls" in message
    assert "test_save_and_load" not in message and "since the loop began" not in message


def test_one_finding_for_a_helper_two_loops_carry_names_both_loops():
    (finding,) = findings(CORPUS / "tl002_bug_helper_called_from_two_loops.py")
    assert finding["message"].endswith(
        "`update()` runs this on every call; the loop in `pretrain()` calls it at line 16, once per iteration; "
        "so does the loop in `finetune()` (line 23).")


def _loop_resets(source: str):
    import libcst as cst

    from torchlint.names import ModuleNames
    from torchlint.training.loop import find_training_loops

    module = cst.parse_module(source)
    (loop,) = find_training_loops(module, ModuleNames(module))
    return sorted((reset.target, reset.kind) for reset in loop.resets)


def test_a_reset_two_functions_below_the_loop_is_the_reset_of_what_the_calls_pass():
    # `update` hands each optimizer to `apply`, which resets it: the loop resets both, under the loop's names.
    source = (
        "import torch\n"
        "class Agent:\n"
        "    def run(self, data):\n"
        "        for x in data:\n"
        "            self.update(x)\n"
        "    def update(self, x):\n"
        "        self.apply(self.critic_optimizer, self.critic(x).mean())\n"
        "        self.apply(self.actor_optimizer, -self.critic(self.actor(x)).mean())\n"
        "    @staticmethod\n"
        "    def apply(optimizer, objective):\n"
        "        optimizer.zero_grad()\n"
        "        objective.backward()\n"
        "        optimizer.step()\n"
    )
    resets = _loop_resets(source)
    assert {("self.actor_optimizer", "zero_grad"), ("self.critic_optimizer", "zero_grad")} <= set(resets)
    assert all(target != "optimizer" for target, _ in resets)  # the helper's parameter, not a name of the loop
    # Resetting only under a condition of its own, it is a reset that may happen at the loop's call.
    assert _loop_resets(source.replace("        optimizer.zero_grad()\n",
                                       "        if objective.item() > 0:\n            optimizer.zero_grad()\n")
                        ) == [("self.update", "helper-maybe")]
    assert _loop_resets(source.replace("        optimizer.zero_grad()\n", "")) == []


def test_a_loop_whose_helper_resets_through_a_helper_of_its_own_is_quiet():
    assert findings(CORPUS / "tl002_trap_reset_two_helpers_deep.py") == []
    (finding,) = findings(CORPUS / "tl002_bug_step_two_helpers_deep.py")
    assert (finding["code"], finding["line"]) == ("TL002", 25)


def _fed_back_graph(source: str, name: str):
    import libcst as cst

    from torchlint.names import ModuleNames
    from torchlint.training.loop import find_training_loops

    module = cst.parse_module(source)
    (loop,) = find_training_loops(module, ModuleNames(module))
    (update,) = [update for update in loop.assignments if update.target == name]
    return loop.fed_back_graph(update)


_BASELINE = (
    "import torch\n"
    "class Agent(torch.nn.Module):\n"
    "    def estimate(self, x, baseline):\n"
    "        fresh = torch.zeros(4)\n"
    "        with torch.no_grad():\n"
    "            fresh[0] = x.mean()\n"
    "        WRITE\n"
    "        return self.policy(x).mean(), 0.9 * baseline + 0.1 * fresh\n"
    "def train(data):\n"
    "    agent = Agent()\n"
    "    baseline = torch.zeros(4)\n"
    "    for x in data:\n"
    "        loss, baseline = agent.estimate(x, baseline)\n"
    "        loss.backward()\n"
)


def test_a_state_the_producer_builds_without_a_forward_pass_carries_no_graph():
    from torchlint.training import graph

    # Filled under `no_grad()`, blended with what is handed back in: no graph ever enters it.
    assert _fed_back_graph(_BASELINE.replace("WRITE", "pass"), "baseline") == graph.NO
    # A forward pass written into an element of it outside `no_grad()` brings one in.
    assert _fed_back_graph(_BASELINE.replace("WRITE", "fresh[1] += self.policy(x).sum()"), "baseline") == graph.YES
    assert _fed_back_graph(_BASELINE.replace("WRITE", "fresh.add_(self.policy(x))"), "baseline") == graph.YES
    # The slot that holds the forward pass is the model's output.
    assert _fed_back_graph(_BASELINE.replace("WRITE", "pass").replace("loss, baseline", "baseline, loss"),
                           "baseline") == graph.YES
    # Started from a value whose graph the code does not show, the state's is not shown either.
    assert _fed_back_graph(_BASELINE.replace("WRITE", "pass").replace("baseline = torch.zeros(4)",
                                                                      "baseline = data.first"),
                           "baseline") == graph.UNKNOWN
