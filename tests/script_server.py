"""Run fixture scripts as separate processes forked from one interpreter that has imported torch.

Most of a fixture script's run is `import torch`. This server imports it once; for each request (one JSON line
on stdin: `{"path": ..., "args": [...], "cwd": ...}`) it forks a child that runs the script as `python PATH ARGS`
would (`__main__`, `sys.argv`, `sys.path[0]` the script's folder, its own working directory, stdout and stderr
to files), and answers one JSON line: `{"returncode": ..., "stdout": ..., "stderr": ...}`. Each run is still a
process of its own: nothing one script does is seen by the next. The parent imports torch, and what an
optimizer imports on first use, but runs no torch operation (no thread pool, no CUDA context is inherited).
Requests are served one at a time; run one server per concurrent run.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import tempfile
import traceback


def _child(path: str, args: list, cwd: str, out: str, err: str, timeout: int) -> None:
    signal.alarm(timeout)  # a script that hangs is killed (returncode -SIGALRM) rather than block the tests
    for fd, name in ((1, out), (2, err)):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdin = open(os.devnull)
    os.chdir(cwd)
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as stop:
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - as the interpreter reports an uncaught exception
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve() -> None:
    import torch  # noqa: F401 - imported once, inherited by every run

    try:  # what an optimizer imports on first use (TorchDynamo, about 800 modules, 2 s): imports only, no op
        import torch._dynamo  # noqa: F401
    except ImportError:
        pass

    scratch = tempfile.mkdtemp(prefix="script-server-")
    for line in sys.stdin:
        request = json.loads(line)
        out, err = os.path.join(scratch, "out"), os.path.join(scratch, "err")
        pid = os.fork()
        if pid == 0:
            _child(request["path"], request["args"], request["cwd"], out, err, request.get("timeout", 120))
        _, status = os.waitpid(pid, 0)
        returncode = os.waitstatus_to_exitcode(status)
        with open(out, encoding="utf-8", errors="replace") as stream:
            stdout = stream.read()
        with open(err, encoding="utf-8", errors="replace") as stream:
            stderr = stream.read()
        print(json.dumps({"returncode": returncode, "stdout": stdout, "stderr": stderr}), flush=True)


if __name__ == "__main__":
    serve()
