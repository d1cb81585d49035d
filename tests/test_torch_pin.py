"""The torch versions a project allows (`torchlint.project.pins`), read from what its folders declare, and
TL009's before-the-optimizer finding, which rests on it."""

from __future__ import annotations

import json

import pytest

from torchlint.project.pins import conda_bound, parse_version, requirement_bound, torch_pin

# Output, options and messages: the same with and without the speed-ups (test_speed_modes compares those).
TORCHLINT_MODES = ["pool+cache"]

OLD = (1, 1)


@pytest.mark.parametrize("requirement, bound", [
    ("torch==0.4.1", ((0, 4, 1), True)),
    ("torch == 0.4.1  # the CUDA 9 wheel", ((0, 4, 1), True)),
    ("torch<1.1", ((1, 1), False)),
    ("torch>=0.4,<1.0", ((1, 0), False)),
    ("torch==1.0.*", ((1, 1), False)),
    ("torch~=0.4.1", ((0, 5), False)),
    ("torch<=1.0.1", ((1, 0, 1), True)),
    ("Torch[cuda]==1.10.1+cu113", ((1, 10, 1), True)),
    ("torch==0.2.0.post4", ((0, 2, 0), True)),
    ("http://download.pytorch.org/whl/cu90/torch-0.4.1-cp36-cp36m-linux_x86_64.whl", ((0, 4, 1), True)),
    ("torch @ https://download.pytorch.org/whl/cu80/torch-0.3.1-cp36-cp36m-linux_x86_64.whl", ((0, 3, 1), True)),
    ("torch>=0.4", None),
    ("torch", None),
    ("torchvision==0.2.1", None),
    ('torch==0.4.1; python_version < "3.7"', None),  # a marker: only sometimes
])
def test_a_requirement_gives_the_newest_torch_it_allows(requirement, bound):
    assert requirement_bound(requirement) == bound


@pytest.mark.parametrize("spec, bound", [
    ("pytorch=0.4.1", ((0, 4, 2), False)),  # conda's `=` is a prefix: 0.4.1.*
    ("pytorch=0.2.0=py36h53baedd_4cu80", ((0, 2, 1), False)),
    ("pytorch::pytorch=0.4", ((0, 5), False)),
    ("pytorch>=1.0,<1.1", ((1, 1), False)),
    ("pytorch", None),
    ("torchvision=0.2.1", None),
])
def test_a_conda_dependency_gives_the_newest_torch_it_allows(spec, bound):
    assert conda_bound(spec) == bound


def test_versions_compare_by_their_release_numbers():
    assert parse_version("1.10.1+cu113") == (1, 10, 1)
    assert parse_version("0.4.1.post2") == (0, 4, 1)
    assert parse_version("dev") is None


def _project(tmp_path, files):
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("files, old", [
    ({"requirements.txt": "numpy\ntorch==0.4.1\n"}, True),
    ({"requirements.txt": "torch>=0.4\n"}, False),  # open-ended: today's torch
    ({"requirements.txt": "numpy\n"}, False),  # unpinned: today's torch
    ({}, False),
    ({"requirements.txt": "-r base.txt\n", "base.txt": "torch<1.1\n"}, True),
    ({"requirements.txt": "torch>=0.4\ntorch<1.0\n"}, True),  # one file's lines hold together
    ({"requirements.txt": "torch==1.0.1\n", "setup.py": "setup(install_requires=['torch>=1.0,<1.2'])\n"}, False),
    ({"setup.py": "from setuptools import setup\nsetup(install_requires=['torch==0.4.1'])\n"}, True),
    ({"pyproject.toml": "[project]\nname = 'x'\ndependencies = ['torch>=0.4,<1.0']\n"}, True),
    ({"pyproject.toml": "[tool.poetry.dependencies]\ntorch = '^0.4.1'\n"}, True),
    ({"pyproject.toml": "[tool.poetry.dependencies]\ntorch = '^1.0'\n"}, False),
    ({"environment.yml": "dependencies:\n  - pytorch=0.4.1\n"}, True),
    ({"environment.yml": "dependencies:\n  - pip:\n    - torch==0.4.1\n"}, True),
    ({"environment.yml": "dependencies:\n  - pytorch\n"}, False),
    ({"environment.yml": "dependencies:\n  - pytorch::pytorch==0.4.1\n"}, True),
    # the nearest folder that names torch decides: the old subproject under a modern root
    ({"requirements.txt": "torch>=2.0\n", "old/requirements.txt": "torch==0.4.1\n"}, True),
])
def test_the_nearest_declaration_says_whether_every_allowed_torch_is_older_than_1_1(tmp_path, files, old):
    root = _project(tmp_path, files)
    script = root / "old" / "train.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("", encoding="utf-8")
    assert torch_pin(str(script), str(root)).below(OLD) is old


def test_a_folder_above_the_root_is_not_read(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==0.4.1\n", encoding="utf-8")
    root = _project(tmp_path / "project", {"train.py": ""})
    assert not torch_pin(str(root / "train.py"), str(root)).below(OLD)


SCHEDULER_FIRST = (
    "import torch\n\n\n"
    "def train(model, loader, optimizer, criterion):\n"
    "    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1000)\n"
    "    for x, y in loader:\n"
    "        scheduler.step()\n"
    "        optimizer.zero_grad()\n"
    "        criterion(model(x), y).backward()\n"
    "        optimizer.step()\n"
)


def test_the_cache_notices_the_torch_pin_changing(torchlint, tmp_path):
    project = _project(tmp_path / "project", {"requirements.txt": "torch==0.4.1\n", "train.py": SCHEDULER_FIRST})
    cache = tmp_path / "cache"
    first = torchlint("train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert json.loads(first.stdout) == []
    (project / "requirements.txt").write_text("torch>=1.1\n", encoding="utf-8")
    second = torchlint("train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert [(d["code"], d["line"]) for d in json.loads(second.stdout)] == [("TL009", 7)]


def test_the_cache_notices_a_requirements_file_created_where_there_was_none(torchlint, tmp_path):
    """The script's folder declared nothing when its findings were kept; a `requirements.txt` pinning torch 0.4
    written there afterwards makes the scheduler-first order right, and the next run says so."""
    project = _project(tmp_path / "project", {"src/train.py": SCHEDULER_FIRST})
    cache = tmp_path / "cache"
    first = torchlint("src/train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert [(d["code"], d["line"]) for d in json.loads(first.stdout)] == [("TL009", 7)]
    (project / "src" / "requirements.txt").write_text("torch==0.4.1\n", encoding="utf-8")
    second = torchlint("src/train.py", "--cache-dir", str(cache), "--output-format", "json", cwd=project)
    assert json.loads(second.stdout) == []


def test_a_scheduler_stepped_on_every_micro_batch_is_flagged_under_old_torch_too(tmp_path):
    """The pin settles only the order's premise: a schedule `N`x too fast is too fast in torch 0.4 as well."""
    from torchlint.engine import lint_source
    from torchlint.rules import ALL_RULES

    text = (
        "import torch\n\n\n"
        "def train(model, loader, optimizer, criterion, accum, epochs):\n"
        "    total = len(loader) // accum * epochs\n"
        "    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total)\n"
        "    for i, (x, y) in enumerate(loader):\n"
        "        (criterion(model(x), y) / accum).backward()\n"
        "        scheduler.step()\n"
        "        if (i + 1) % accum == 0:\n"
        "            optimizer.step()\n"
        "            optimizer.zero_grad()\n"
    )
    root = _project(tmp_path, {"requirements.txt": "torch==0.4.1\n", "train.py": text})
    diagnostics, problems = lint_source(text, str(root / "train.py"), ALL_RULES)
    assert not problems
    assert [(d.code, d.line) for d in diagnostics if d.code == "TL009"] == [("TL009", 9)]


def test_a_copy_outside_a_repository_reads_the_folder_above_its_script(tmp_path):
    """A downloaded copy (no `.git`): `scripts/train.py` runs with the `requirements.txt` beside `scripts/`; the
    walk stops at that first folder that declares dependencies."""
    (tmp_path / "requirements.txt").write_text("torch>=2.0\n", encoding="utf-8")
    (tmp_path / "copy" / "scripts").mkdir(parents=True)
    (tmp_path / "copy" / "requirements.txt").write_text("numpy\n", encoding="utf-8")
    script = tmp_path / "copy" / "scripts" / "train.py"
    script.write_text("", encoding="utf-8")
    (tmp_path / "copy" / "requirements.txt").write_text("torch==0.4.1\n", encoding="utf-8")
    assert torch_pin(str(script), None).below(OLD)
    (tmp_path / "copy" / "requirements.txt").write_text("numpy\n", encoding="utf-8")
    assert not torch_pin(str(script), None).below(OLD)  # the copy's own declarations end the walk


def test_a_file_a_requirements_file_includes_is_read_again_when_it_changes(tmp_path):
    root = _project(tmp_path, {"requirements.txt": "-r base.txt\n", "base.txt": "torch<1.1\n", "train.py": ""})
    pin = torch_pin(str(root / "train.py"), str(root))
    assert pin.below(OLD) and str(root / "base.txt") in pin.files  # the finding rests on it too
    (root / "base.txt").write_text("torch>=1.1,<3\n", encoding="utf-8")
    assert not torch_pin(str(root / "train.py"), str(root)).below(OLD)
