"""JupyterLab shows torchlint's findings in the cells they belong to, set up as the README says.

End to end: JupyterLab with jupyterlab-lsp, the README's `jupyter_server_config.json` registering
`torchlint lsp`, and a notebook opened in headless Chromium driven by Selenium. What the browser shows
(the underlines in each cell, the diagnostics panel, the hover) must be what `torchlint train.ipynb`
prints for the same notebook: as opened, after an edit typed into a cell, and after the README's way
of fixing (`torchlint --fix`, then reloading the notebook).

Those tests are skipped, with the reason, where JupyterLab, jupyterlab-lsp, Selenium, Chromium or
chromedriver is missing (`python -m pip install -e ".[test-jupyter]"`; Debian: `apt-get install chromium
chromium-driver`). `TORCHLINT_JUPYTERLAB_SCREENSHOT=path.png` keeps a copy of the screenshot the first
one takes. The last test needs none of them: it sends `torchlint lsp` the document jupyterlab-lsp sends
(recorded, and checked by the first test), so CI protects what JupyterLab relies on.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp (a test dependency) drives `torchlint lsp`")

from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from conftest import REPO  # noqa: E402
from test_lsp import SERVER, mark, published, start  # noqa: E402

README = (REPO / "README.md").read_text(encoding="utf-8")

CELLS = [  # (cell type, source): a markdown cell and a magic, so cell numbers and lines must be mapped
    ("markdown", "# Fine-tuning with gradient accumulation"),
    ("code", "%matplotlib inline\nimport torch\nfrom torch import nn"),
    ("code", "model = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "criterion = nn.MSELoss()\naccum = 4\n"
             "loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(10)]"),
    ("code", "for i, (x, y) in enumerate(loader):\n"
             "    loss = criterion(model(x), y)\n"
             "    loss.backward()\n"
             "    if i % accum == 0:\n"
             "        optimizer.step()\n"
             "        optimizer.zero_grad()"),
]
LOOP_CELL = 3  # the code cell (1-based, as the command line counts them) that holds the loop
CONDITION, EDITED_CONDITION = "i % accum == 0", "(i + 1) % accum == 0"  # the edit typed into the loop's cell

# What jupyterlab-lsp 5.3 sends `torchlint lsp` for CELLS (recorded from JupyterLab's traffic; the first test
# checks it still does): one Python text document at the notebook's own `.ipynb` URI, every cell in order
# two blank lines apart, a markdown cell as an empty line, a magic rewritten as the call IPython makes.
JUPYTERLAB_LSP_DOCUMENT = (
    "\n\n\n"
    'get_ipython().run_line_magic("matplotlib", " inline")\nimport torch\nfrom torch import nn\n\n\n'
    "model = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\ncriterion = nn.MSELoss()\n"
    "accum = 4\nloader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(10)]\n\n\n"
    "for i, (x, y) in enumerate(loader):\n    loss = criterion(model(x), y)\n    loss.backward()\n"
    "    if i % accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n"
)

START_TIMEOUT = 120  # seconds JupyterLab may take to start
SHOW_TIMEOUT = 120  # seconds the browser may take to show what is expected; every wait ends once it does


# --- the README ---------------------------------------------------------------------------------------------


def readme_json(introduced_by: str) -> Tuple[str, dict]:
    """The README's ```json block whose introducing paragraph mentions `introduced_by`, with that paragraph."""
    for match in re.finditer(r"```json\n(.*?)```", README, re.DOTALL):
        paragraph = " ".join(README[:match.start()].rstrip().rsplit("\n\n", 1)[-1].split())
        if introduced_by in paragraph:
            return paragraph, json.loads(match.group(1))
    raise AssertionError(f"the README has no ```json block after a paragraph mentioning {introduced_by}")


def readme_server_config() -> dict:
    return readme_json("jupyter_server_config.json")[1]


def readme_priority_setting() -> Tuple[str, dict]:
    """The README's jupyterlab-lsp setting that makes torchlint the notebook's server: the settings file
    (relative to JupyterLab's user-settings folder) and its content."""
    paragraph, setting = readme_json("plugin.jupyterlab-settings")
    return re.search(r"`~/\.jupyter/lab/user-settings/([^`]+)`", paragraph).group(1), setting


# --- the notebook and what the command line says of it ------------------------------------------------------


def notebook_json(cells: List[Tuple[str, str]]) -> dict:
    def cell(index: int, kind: str, source: str) -> dict:
        made = {"cell_type": kind, "id": f"cell-{index}", "metadata": {}, "source": source.splitlines(keepends=True)}
        if kind == "code":
            made.update(execution_count=None, outputs=[])
        return made

    return {"nbformat": 4, "nbformat_minor": 5,
            "cells": [cell(index, kind, source) for index, (kind, source) in enumerate(cells)],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}}


def read_notebook(path: Path) -> dict:
    with contextlib.suppress(ValueError):
        return json.loads(path.read_text(encoding="utf-8"))
    return {"cells": []}  # caught while JupyterLab writes it: read again on the next poll


def code_cells(notebook: dict) -> List[str]:
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def command_line_findings(path: Path, *options: str) -> List[dict]:
    """What `torchlint` says of `path` (as JSON): the findings the browser must show."""
    result = subprocess.run([sys.executable, "-m", "torchlint", str(path), "--no-cache", "--output-format", "json",
                             *options], capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def underlined(findings: List[dict], notebook: dict) -> List[Tuple[int, str, str]]:
    """(code cell, underlined text, severity) for each finding, as the cell's editor should mark it."""
    sources = code_cells(notebook)
    marks = []
    for finding in findings:
        assert finding["line"] == finding["end_line"], finding  # so the underlined text is on one line
        line = sources[finding["cell"] - 1].splitlines()[finding["line"] - 1]
        marks.append((finding["cell"], line[finding["column"] - 1:finding["end_column"] - 1], finding["severity"]))
    return sorted(marks)


def panel_rows(findings: List[dict], notebook: dict) -> List[Tuple[str, ...]]:
    """The rows jupyterlab-lsp's diagnostics panel should list: message, code, severity, source, cell, line:ch.

    The panel numbers a notebook's cells from 1 among all its cells (markdown too), where the command line
    counts code cells only; its lines and characters count from 0, within the cell.
    """
    position = [number for number, cell in enumerate(notebook["cells"], 1) if cell["cell_type"] == "code"]
    return sorted((finding["message"], finding["code"], finding["severity"].capitalize(), "torchlint",
                   str(position[finding["cell"] - 1]), f"{finding['line'] - 1}:{finding['column'] - 1}")
                  for finding in findings)


# --- the tools, or the reason to skip -----------------------------------------------------------------------


def require_tools() -> Tuple[str, str]:
    """Chromium and chromedriver; skips, naming what is missing, where the browser or JupyterLab's side is not there."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip("Chromium or chromedriver is not installed (Debian: `apt-get install chromium chromium-driver`)")
    install = 'python -m pip install -e ".[test-jupyter]"'
    for distribution, major in (("jupyterlab", "4"), ("jupyter-lsp", None), ("jupyterlab-lsp", "5"), ("selenium", None)):
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{distribution} is not installed ({install})")
        if major is not None and version.split(".")[0] != major:
            pytest.skip(f"{distribution} {version} is installed; the README's configuration is for {major}.x ({install})")
    return browser, driver


# jupyter-lsp's listener hook, loaded by the test's JupyterLab: every message between JupyterLab and a
# language server goes into a file, one JSON object a line (what the client asked for, and of which server).
TRAFFIC_LISTENER = '''\
import json
import os


async def record(scope, message, language_server, manager):
    with open(os.environ["TORCHLINT_LSP_TRAFFIC"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"scope": scope, "server": language_server, "message": message}) + "\\n")
'''


@contextlib.contextmanager
def jupyterlab(root: Path, home: Path, server_config: dict,
               user_settings: Dict[str, dict]) -> Iterator[Tuple[str, Callable[[], str], Path]]:
    """JupyterLab serving `root` on a free loopback port with authentication off, every Jupyter folder in
    `home`, `server_config` as its `jupyter_server_config.json` and `user_settings` (file under
    `lab/user-settings` -> content) as the user's settings.

    Yields its URL, a function giving the end of its log, and the file its LSP traffic is recorded in.
    Shut down, with its kernels and language servers, however the test ends.
    """
    config, data, runtime, listener = (home / name for name in ("config", "data", "runtime", "listener"))
    for folder in (config, data, runtime, listener):
        folder.mkdir(parents=True)
    (config / "jupyter_server_config.json").write_text(json.dumps(server_config), encoding="utf-8")
    (listener / "torchlint_lsp_traffic.py").write_text(TRAFFIC_LISTENER, encoding="utf-8")
    (config / "jupyter_server_config.py").write_text(
        'c.LanguageServerManager.all_listeners = ["torchlint_lsp_traffic.record"]\n', encoding="utf-8")
    # No "would you like news?" notification over the notebook.
    settings = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
                **user_settings}
    for name, content in settings.items():
        path = config / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content), encoding="utf-8")
    traffic, log_path = home / "lsp-traffic.jsonl", home / "jupyterlab.log"
    bin_dir = str(Path(sys.executable).parent)  # where `torchlint` is installed, as the README's argv runs it
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_DATA_DIR": str(data),
           "JUPYTER_RUNTIME_DIR": str(runtime), "TORCHLINT_LSP_TRAFFIC": str(traffic),
           "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(listener), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0",
               f"--ServerApp.root_dir={root}", "--IdentityProvider.token=", "--ServerApp.allow_root=True",
               "--LabApp.extension_manager=readonly", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=str(root), env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)

    def log_tail() -> str:
        return log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    try:
        info = runtime / f"jpserver-{process.pid}.json"  # written once the server listens, with its URL
        deadline = time.monotonic() + START_TIMEOUT
        url = None
        while url is None:
            assert process.poll() is None, f"JupyterLab exited with {process.returncode}:\n{log_tail()}"
            assert time.monotonic() < deadline, f"JupyterLab did not start in {START_TIMEOUT} s:\n{log_tail()}"
            with contextlib.suppress(OSError, ValueError, KeyError):
                url = json.loads(info.read_text(encoding="utf-8"))["url"].rstrip("/")
            time.sleep(0.2)
        yield url, log_tail, traffic
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Stop the JupyterLab this test started: SIGTERM is Jupyter's own shutdown (kernels and language
    servers first); what is left of its process group (a session of its own) is killed after 30 s."""
    if process.poll() is None:
        process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


@contextlib.contextmanager
def chromium(browser: str, driver_path: str, profile: Path) -> Iterator[object]:
    """Headless Chromium driven by Selenium, with a fresh profile and nothing that reaches the network."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,1200"):
        options.add_argument(flag)
    # Both paths given: Selenium Manager, which could download a driver or a browser, never runs.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


# --- what the browser shows ---------------------------------------------------------------------------------

# (code cell, underlined text, severity) for every lint mark CodeMirror draws in the notebook's code cells.
MARKS_JS = """
return Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell')).flatMap((cell, index) =>
  Array.from(cell.querySelectorAll('.cm-lintRange')).map(mark =>
    [index + 1, mark.textContent, (mark.className.match(/cm-lintRange-(\\w+)/) || [null, null])[1]]));
"""
# (underlined text, severity) for every lint mark in JupyterLab's file editor.
FILE_MARKS_JS = """
return Array.from(document.querySelectorAll('.jp-FileEditor .cm-lintRange')).map(mark =>
  [mark.textContent, (mark.className.match(/cm-lintRange-(\\w+)/) || [null, null])[1]]);
"""
# The rows of jupyterlab-lsp's diagnostics panel.
PANEL_JS = """
return Array.from(document.querySelectorAll('.lsp-diagnostics-listing tbody tr')).map(row =>
  Array.from(row.querySelectorAll('td')).map(cell => cell.textContent));
"""
# The lines of code cell arguments[0] (1-based) as its editor holds them; null while there is no such cell
# (a notebook being reloaded).
CELL_LINES_JS = """
const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[arguments[0] - 1];
return cell ? Array.from(cell.querySelectorAll('.cm-content .cm-line')).map(line => line.textContent) : null;
"""


class Lab:
    """A notebook open in JupyterLab in the browser, and what the browser shows of it."""

    def __init__(self, driver, url: str, notebook: Path, log_tail: Callable[[], str], traffic: Path,
                 screenshot: Path):
        self.driver, self.url, self.notebook, self.log_tail, self.traffic, self.screenshot = (
            driver, url, notebook, log_tail, traffic, screenshot)

    def wait_until(self, what: str, seen: Callable[[], object], expected: object, timeout: float = SHOW_TIMEOUT):
        from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        last = [None]

        def holds(_driver) -> bool:
            last[0] = seen()
            return last[0] == expected

        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.2,
                          ignored_exceptions=(StaleElementReferenceException,)).until(holds)
        except TimeoutException:
            raise AssertionError(f"after {timeout} s, {what}:\n  seen     {last[0]!r}\n  expected {expected!r}\n"
                                 f"screenshot: {self.screenshot}\nJupyterLab's log:\n{self.log_tail()}") from None

    def marks(self) -> list:
        return sorted(tuple(mark) for mark in self.driver.execute_script(MARKS_JS))

    def file_marks(self) -> list:
        return sorted(tuple(mark) for mark in self.driver.execute_script(FILE_MARKS_JS))

    def panel(self) -> list:
        return sorted(tuple(row) for row in self.driver.execute_script(PANEL_JS))

    def cell_lines(self, number: int) -> List[str]:
        return self.driver.execute_script(CELL_LINES_JS, number)

    def mark(self, cell: int, text: str):
        """The underline of `text` in code cell `cell` (the first, where several findings share it)."""
        from selenium.webdriver.common.by import By

        def found(driver):
            code_cell = driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-CodeCell")[cell - 1]
            return next((mark for mark in code_cell.find_elements(By.CSS_SELECTOR, ".cm-lintRange")
                         if mark.text == text), None)

        return self.until(found)

    def choose(self, *path: str) -> None:
        """Click the menu items named by `path`, each in the menu the one before opened."""
        from selenium.webdriver.common.by import By

        for index, label in enumerate(path):
            selector = ".lm-MenuBar-item" if index == 0 and len(path) > 1 else ".lm-Menu-item"
            self.until(lambda driver: next((item for item in driver.find_elements(By.CSS_SELECTOR, selector)
                                            if item.is_displayed() and item.text.strip() == label), None)).click()

    def until(self, find: Callable[[object], object], timeout: float = 30):
        """What `find` returns once it is something, asked again while the page redraws what it looked at."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout, poll_frequency=0.2,
                             ignored_exceptions=(StaleElementReferenceException,)).until(find)

    def client_messages(self) -> List[dict]:
        """What JupyterLab sent to language servers, each with the server it went to under "server"."""
        records = [json.loads(line) for line in self.traffic.read_text(encoding="utf-8").splitlines()]
        return [{**record["message"], "server": record["server"]} for record in records if record["scope"] == "client"]


@contextlib.contextmanager
def notebook_in_jupyterlab(tmp_path: Path, server_config: dict, user_settings: Dict[str, dict]) -> Iterator[Lab]:
    """CELLS as `project/train.ipynb`, open in JupyterLab in headless Chromium."""
    browser, driver_path = require_tools()
    root = tmp_path / "project"
    root.mkdir()
    notebook = root / "train.ipynb"
    notebook.write_text(json.dumps(notebook_json(CELLS), indent=1) + "\n", encoding="utf-8")
    with contextlib.ExitStack() as stack:
        url, log_tail, traffic = stack.enter_context(jupyterlab(root, tmp_path / "home", server_config, user_settings))
        driver = stack.enter_context(chromium(browser, driver_path, tmp_path / "chromium-profile"))
        last = tmp_path / "jupyterlab-last.png"
        stack.callback(driver.save_screenshot, str(last))  # however the test ends: what was on the screen
        driver.get(f"{url}/lab/tree/{notebook.name}")
        yield Lab(driver, url, notebook, log_tail, traffic, last)


# --- the tests ----------------------------------------------------------------------------------------------


def test_jupyterlab_shows_torchlints_findings_in_the_cells_they_belong_to(tmp_path):
    require_tools()  # before Selenium is imported: a machine with Chromium but without the extra skips
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    screenshot = tmp_path / "jupyterlab.png"
    with notebook_in_jupyterlab(tmp_path, readme_server_config(), {}) as lab:
        opened = read_notebook(lab.notebook)
        findings = command_line_findings(lab.notebook)
        # The notebook holds the bugs it is written to hold: the command line finds them in the loop's cell.
        assert {("TL003", LOOP_CELL), ("TL004", LOOP_CELL)} <= {(f["code"], f["cell"]) for f in findings}, findings

        # 1. Each code cell underlines the text the command line points at, with its severity.
        lab.wait_until("the notebook's underlines", lab.marks, underlined(findings, opened))

        # 2. The diagnostics panel (right-click in a cell, "Show diagnostics panel") lists the command line's
        #    messages and codes, each in its cell, at its line and column within the cell.
        loop = lab.driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-CodeCell")[LOOP_CELL - 1]
        ActionChains(lab.driver).context_click(loop.find_element(By.CSS_SELECTOR, ".cm-content")).perform()
        lab.choose("Show diagnostics panel")
        lab.wait_until("the diagnostics panel", lab.panel, panel_rows(findings, opened))

        # 3. Hovering an underline shows the messages of the findings there (and nothing else: no timeline).
        condition_line = 1 + [line.strip() for line in code_cells(opened)[LOOP_CELL - 1].splitlines()].index(
            f"if {CONDITION}:")
        ActionChains(lab.driver).move_to_element(lab.mark(LOOP_CELL, CONDITION)).perform()
        lab.wait_until(f"the hover over `{CONDITION}`", lambda: sorted(item.text for item in lab.driver.find_elements(
            By.CSS_SELECTOR, ".cm-tooltip-lint .cm-diagnostic")), sorted(
            f"{f['message']}\ntorchlint" for f in findings if (f["cell"], f["line"]) == (LOOP_CELL, condition_line)),
            timeout=30)
        lab.driver.save_screenshot(str(screenshot))

        # 4. An edit typed into the cell is linted again: the condition is rewritten by hand and saved, and
        #    the browser shows what the command line says of the saved notebook.
        ActionChains(lab.driver).click(lab.mark(LOOP_CELL, CONDITION)).send_keys(Keys.END).key_down(Keys.SHIFT) \
            .send_keys(Keys.HOME).key_up(Keys.SHIFT).send_keys(f"if {EDITED_CONDITION}:").perform()
        edited = code_cells(opened)[LOOP_CELL - 1].replace(CONDITION, EDITED_CONDITION)
        lab.wait_until("the loop's cell after the edit", lambda: lab.cell_lines(LOOP_CELL), edited.splitlines(), 30)
        ActionChains(lab.driver).key_down(Keys.CONTROL).send_keys("s").key_up(Keys.CONTROL).perform()
        lab.wait_until("the saved notebook's loop cell", lambda: code_cells(read_notebook(lab.notebook))[LOOP_CELL - 1:],
                       [edited], timeout=30)
        saved, after_edit = read_notebook(lab.notebook), command_line_findings(lab.notebook)
        assert {f["code"] for f in after_edit} >= {"TL003"} and "TL004" not in {f["code"] for f in after_edit}
        lab.wait_until("the underlines after the edit", lab.marks, underlined(after_edit, saved))
        lab.wait_until("the diagnostics panel after the edit", lab.panel, panel_rows(after_edit, saved))

        # 5. The README's way to fix: `torchlint --fix` on the saved notebook, then File > Reload Notebook
        #    from Disk; the safe fixes are in the cells and their underlines gone.
        command_line_findings(lab.notebook, "--fix")
        fixed, after_fix = read_notebook(lab.notebook), command_line_findings(lab.notebook)
        assert "loss = loss / accum" in code_cells(fixed)[LOOP_CELL - 1] and "TL003" not in {f["code"] for f in after_fix}
        lab.choose("File", "Reload Notebook from Disk")
        lab.wait_until("the loop's cell after the reload", lambda: lab.cell_lines(LOOP_CELL),
                       code_cells(fixed)[LOOP_CELL - 1].splitlines(), timeout=30)
        lab.wait_until("the underlines after the fix", lab.marks, underlined(after_fix, fixed))
        lab.wait_until("the diagnostics panel after the fix", lab.panel, panel_rows(after_fix, fixed))

        # 6. A Python file opened in JupyterLab's editor: the same program, the same findings.
        script = lab.notebook.with_name("train.py")
        script.write_text("\n".join(code_cells(opened)).replace("%matplotlib inline\n", "") + "\n", encoding="utf-8")
        in_script = command_line_findings(script)
        assert {"TL003", "TL004"} <= {f["code"] for f in in_script}, in_script
        lines = script.read_text(encoding="utf-8").splitlines()
        lab.driver.get(f"{lab.url}/lab/tree/{script.name}")
        lab.wait_until("the underlines in train.py", lab.file_marks, sorted(
            (lines[f["line"] - 1][f["column"] - 1:f["end_column"] - 1], f["severity"]) for f in in_script))

    if os.environ.get("TORCHLINT_JUPYTERLAB_SCREENSHOT"):
        shutil.copyfile(screenshot, os.environ["TORCHLINT_JUPYTERLAB_SCREENSHOT"])
    # The README's `requires_documents_on_disk: false`: the cells' text goes over the socket, and nothing
    # is written into the user's folder.
    assert not (tmp_path / "project" / ".virtual_documents").exists()
    # The README says JupyterLab offers no quick fix: jupyterlab-lsp 5 neither declares nor asks for code actions.
    sent = lab.client_messages()
    # What the server was sent is what the test below, which needs no browser, sends it.
    opened_document = next(message for message in sent if message.get("method") == "textDocument/didOpen")
    document = opened_document["params"]["textDocument"]
    assert document["uri"].endswith("/project/train.ipynb") and document["languageId"] == "python", document
    assert document["text"] == JUPYTERLAB_LSP_DOCUMENT
    capabilities = next(message for message in sent if message.get("method") == "initialize")["params"]["capabilities"]
    asked = sorted({message["method"] for message in sent if "method" in message})
    assert "codeAction" not in capabilities.get("textDocument", {}) and "textDocument/codeAction" not in asked, (
        "this jupyterlab-lsp asks for code actions: check that torchlint's quick fixes apply in a notebook and say "
        f"so in the README's JupyterLab section (it asked for: {asked})")


def test_the_readme_priority_makes_jupyterlab_use_torchlint_where_another_python_server_is_installed(tmp_path):
    # Another Python language server, named to win the tie jupyterlab-lsp breaks alphabetically (as pylsp,
    # pyright or jedi-language-server would): never started unless chosen, and silent if it were.
    config = readme_server_config()
    servers = config["LanguageServerManager"]["language_servers"]
    assert sorted([*servers, "a-python-server"])[0] == "a-python-server"
    servers["a-python-server"] = {"version": 2, "argv": [sys.executable, "-c", "import sys; sys.stdin.read()"],
                                  "languages": ["python"], "display_name": "another Python language server"}
    settings_file, setting = readme_priority_setting()
    with notebook_in_jupyterlab(tmp_path, config, {settings_file: setting}) as lab:
        findings = command_line_findings(lab.notebook)
        lab.wait_until("the notebook's underlines", lab.marks, underlined(findings, read_notebook(lab.notebook)))
        assert {message["server"] for message in lab.client_messages()} == {"torchlint"}


# --- what JupyterLab sends, without JupyterLab: runs wherever the test dependencies are installed ---------


@pytest_lsp.fixture(config=SERVER)
async def lsp(lsp_client: LanguageClient, tmp_path: Path):
    """`torchlint lsp`, started by pytest-lsp as test_lsp.py starts it."""
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


async def lsp_open(client: LanguageClient, path: Path, text: str) -> List[types.Diagnostic]:
    """Open `text` as jupyterlab-lsp does (at `path`'s URI, as Python, version 0), and the diagnostics published."""
    uri, since = path.as_uri(), mark(client)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=0, text=text)))
    return await published(client, since, uri, 0)


def document_line(notebook: dict, cell: int, line: int) -> int:
    """The 0-based line of JUPYTERLAB_LSP_DOCUMENT that holds `line` (1-based) of code cell `cell` (1-based)."""
    start, code_cell = 0, 0
    for each in notebook["cells"]:
        if each["cell_type"] == "code":
            code_cell += 1
            if code_cell == cell:
                return start + line - 1
        start += max(1, len("".join(each["source"]).splitlines())) + 2  # the cell, then two blank lines
    raise AssertionError(f"no code cell {cell}")


@pytest.mark.asyncio
async def test_the_document_jupyterlab_sends_gets_the_command_lines_findings_on_the_cells_lines(
        lsp: LanguageClient, tmp_path: Path):
    # The notebook's own file is on disk, as JSON, at the URI the document is sent under: the server must
    # lint the text it was sent (the cells' program), not read the file or take the text for JSON.
    notebook = tmp_path / "train.ipynb"
    notebook.write_text(json.dumps(notebook_json(CELLS), indent=1) + "\n", encoding="utf-8")
    findings = command_line_findings(notebook)
    assert {"TL003", "TL004"} <= {f["code"] for f in findings}, findings
    diagnostics = await lsp_open(lsp, notebook, JUPYTERLAB_LSP_DOCUMENT)
    layout = json.loads(notebook.read_text(encoding="utf-8"))
    assert sorted((d.code, d.message, d.range.start.line, d.range.start.character, d.range.end.line,
                   d.range.end.character) for d in diagnostics) == sorted(
        (f["code"], f["message"], document_line(layout, f["cell"], f["line"]), f["column"] - 1,
         document_line(layout, f["cell"], f["end_line"]), f["end_column"] - 1) for f in findings)
