"""The README says what torchlint does: its sample output, its install commands, its editor snippets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ACCUMULATION_BUG, REPO, tomllib

# Output, options and messages: the same with and without the speed-ups (test_speed_modes compares those).
TORCHLINT_MODES = ["pool+cache"]

# What `torchlint --fix` makes of ACCUMULATION_BUG (TL003 at line 3, nothing else to fix).
ACCUMULATION_FIXED = ACCUMULATION_BUG.replace("    loss.backward()\n", "    loss = loss / accum\n    loss.backward()\n")

README = (REPO / "README.md").read_text(encoding="utf-8")


def fenced(language: str) -> list:
    """The README's fenced code blocks in `language`, each with the paragraph just before it (on one line)."""
    return [(" ".join(README[:match.start()].rstrip().rsplit("\n\n", 1)[-1].split()), match.group(1))
            for match in re.finditer(r"```" + language + r"\n(.*?)```", README, re.DOTALL)]


def test_the_sample_output_is_what_torchlint_prints(torchlint):
    sample = fenced("text")[0][1]
    result = torchlint("examples/finetune_accumulation.py")
    assert result.stdout.startswith(sample), result.stdout


def test_the_readme_test_command_is_the_one_ci_runs_and_pins_only_torch():
    install_and_test = fenced("bash")[1][1].strip()
    assert install_and_test == 'python -m pip install torch==2.13.0 -e ".[test]" && python -m pytest'
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert install_and_test in ci.splitlines()


def test_torch_is_a_test_dependency_only_and_any_torch_2_build_satisfies_it():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [requirement for requirement in project["dependencies"] if requirement.startswith("torch")]
    assert [r for r in project["optional-dependencies"]["test"] if r.startswith("torch")] == ["torch>=2.0"]
    assert "any recent CPU or CUDA build of torch 2 will do" in " ".join(README.split())


def test_the_linter_never_imports_torch(tmp_path):
    blocked = ("import sys, runpy; sys.modules['torch'] = None; sys.argv[0] = 'torchlint'; "
               "runpy.run_module('torchlint', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", blocked, "examples", "--no-cache", "--output-format", "concise"],
                            cwd=str(REPO), capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Found 18 problems" in result.stdout  # the eighteen bugs of examples/, one each


# --- Neovim ---------------------------------------------------------------------------------------------

NEOVIM_SNIPPETS = {  # the first version each snippet is for -> the snippet
    (0, 11): next(code for intro, code in fenced("lua") if "0.11 and later" in intro),
    (0, 10): next(code for intro, code in fenced("lua") if intro.startswith("For 0.10")),
    (0, 7): next(code for intro, code in fenced("lua") if intro.startswith("For 0.7 to 0.9")),
}
FLAT_README = " ".join(README.split())
FIX_ALL_CALLS = {  # the first version each call is for -> the call
    (0, 8): re.search(r"Fix everything, on 0\.8 and later, with `([^`]+)`", FLAT_README).group(1),
    (0, 7): re.search(r"on 0\.7, whose `code_action` .*? with `([^`]+)`", FLAT_README).group(1),
}


def for_version(table: dict, version: tuple) -> str:
    return table[max(first for first in table if first <= version)]


def test_every_neovim_snippet_is_lua_that_luajit_compiles():
    pytest.importorskip("lupa", reason="lupa (a test dependency) runs LuaJIT, Neovim's Lua")
    from lupa import luajit21

    compiles = luajit21.LuaRuntime().eval("function(code) local f, e = loadstring(code, 'snippet'); return e or '' end")
    chunks = list(NEOVIM_SNIPPETS.values()) + [f"local _ = function() {call} end" for call in FIX_ALL_CALLS.values()]
    assert len(chunks) == 5
    for chunk in chunks:
        assert compiles(chunk) == "", chunk
    assert "')' expected" in compiles(NEOVIM_SNIPPETS[(0, 7)].replace("function(args)", "function(args"))  # it checks


# Waits for the findings, runs the README's fix-all call (picking the action where Neovim asks), and
# writes what it saw as JSON.
NEOVIM_CHECK = """\
local out = os.getenv("TORCHLINT_NVIM_OUT")
local function finish(result)
  local file = io.open(out, "w")
  file:write(vim.fn.json_encode(result))
  file:close()
  vim.cmd("qa!")
end
if not vim.wait(60000, function() return #vim.diagnostic.get(0) >= 1 end, 50) then
  finish({ error = "no diagnostics" })
end
local found = {}
for _, diagnostic in ipairs(vim.diagnostic.get(0)) do
  table.insert(found, diagnostic.code .. " " .. diagnostic.lnum .. " " .. diagnostic.source)
end
table.sort(found)
vim.ui.select = function(items, opts, on_choice)
  for index, item in ipairs(items) do
    if opts.format_item(item):find("Fix all torchlint problems", 1, true) then
      return on_choice(item, index)
    end
  end
  on_choice(nil, nil)
end
local before = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n")
FIX_ALL
local function text() return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") end
vim.wait(60000, function() return text() ~= before end, 50)
finish({ found = found, fixed = text() })
"""


def neovim_version(nvim: str) -> tuple:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout.splitlines()[0]
    return tuple(int(part) for part in re.match(r"NVIM v(\d+)\.(\d+)", first).groups())


def test_the_neovim_snippet_for_the_installed_version_shows_findings_and_fixes_all(tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed (Debian 12: `apt-get install neovim` gives 0.7.2); "
                    "the snippets were only compiled by LuaJIT")
    version = neovim_version(nvim)
    (tmp_path / "init.lua").write_text(for_version(NEOVIM_SNIPPETS, version), encoding="utf-8")
    check = NEOVIM_CHECK.replace("FIX_ALL", for_version(FIX_ALL_CALLS, version))
    (tmp_path / "check.lua").write_text(check, encoding="utf-8")
    (tmp_path / "train.py").write_text(ACCUMULATION_BUG, encoding="utf-8")
    out = tmp_path / "seen.json"
    bin_dir = str(Path(sys.executable).parent)  # where `torchlint` is installed, as the snippet runs it
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "TORCHLINT_NVIM_OUT": str(out),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = subprocess.run([nvim, "--headless", "-u", "init.lua", "-c", "luafile check.lua", "train.py"],
                            cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=240,
                            stdin=subprocess.DEVNULL)
    assert out.exists(), f"nvim {version} exited {result.returncode}: {result.stdout[-2000:]}{result.stderr[-2000:]}"
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen.get("found") == ["TL003 2 torchlint"], seen
    assert seen["fixed"].rstrip("\n") == ACCUMULATION_FIXED.rstrip("\n")
