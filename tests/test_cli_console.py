"""The ``dpu-designer`` program as its own process (``designer.cli:console``): a headless command
ends with its whole output written and its exit code, also when the reader of its output goes
away early, the output device is full or the streams are closed; and console() sets no allocator
thresholds and ends through SystemExit (issue 20: no mallopt, no os._exit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.cli import console

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    """This environment, with output buffered as a user's shell has it (PYTHONUNBUFFERED would
    hide an unflushed buffer)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _program(*args: str, **kw) -> subprocess.CompletedProcess:
    if not kw:
        kw = {"capture_output": True}
    return subprocess.run([sys.executable, "-m", "designer.cli", *args], env=_env(), cwd=ROOT,
                          timeout=120, **kw)


@pytest.fixture(scope="module")
def design(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("console") / "d.json"
    done = _program("new", "--template", "rail-optimized", "--servers", "64", "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_whole_json_output_and_code(design):
    """Every byte of a large JSON output reaches the reader before the process ends."""
    done = _program("run", str(design), "--workload", "gpt3-175b", "--tp", "8", "--pp", "8", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(b"}\n")  # the last line end too (print's, left in the buffer)
    result = json.loads(done.stdout)
    assert result["gpus"] == 512 and len(result["links"]) > 100
    assert done.stderr == b""


def test_bad_input_code_and_message(tmp_path):
    done = _program("run", str(tmp_path / "missing.json"))
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"no such file" in done.stderr and b"Traceback" not in done.stderr


def test_reader_gone_early_is_not_an_error(design):
    """``dpu-designer run ... --json | head -c 100``: no traceback, no 'Exception ignored'."""
    env = _env()
    proc = subprocess.Popen([sys.executable, "-m", "designer.cli", "run", str(design), "--workload",
                             "gpt3-175b", "--tp", "8", "--pp", "8", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)
    first = proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert first.startswith(b"{")
    assert b"Traceback" not in err and b"Exception ignored" not in err


def test_console_in_process_exits_with_main_code(monkeypatch, capsys):
    """Without a command (the window) or with other threads alive, console() ends by SystemExit
    carrying main()'s code (here: --version of the GUI parser exits 0)."""
    monkeypatch.setattr(sys, "argv", ["dpu-designer", "--version"])
    with pytest.raises(SystemExit) as exc:
        console()
    assert exc.value.code in (0, None)
    assert "dpu-designer" in capsys.readouterr().out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device that is always full)")
@pytest.mark.parametrize("big", [True, False], ids=["json-written-by-print", "lines-left-in-the-buffer"])
def test_output_that_cannot_be_written_is_one_line_and_code_1(design, big):
    """A full device: print fails inside the command (a big output) or the buffer's last flush
    fails at the end (a short one); either way one line on stderr, exit 1, no traceback."""
    args = (["run", str(design), "--workload", "gpt3-175b", "--tp", "8", "--pp", "8", "--json"] if big
            else ["validate", str(design)])
    with open("/dev/full", "wb") as full:
        done = _program(*args, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1
    assert done.stderr.decode().strip() == "error: cannot write the output: No space left on device"


def test_closed_streams_are_one_line_not_a_traceback(design, tmp_path):
    """Output closed (``>&-``, ``2>&-``): Python has no stream object then. A closed stdout lost
    the command's output: exit 1 and one line on stderr; a closed stderr alone loses nothing (0
    for a sound design); a failing command keeps its code (2 for a missing file)."""
    def closed(*fds):
        return lambda: [os.close(fd) for fd in fds]

    env = _env()
    base = [sys.executable, "-m", "designer.cli", "validate"]
    ok = subprocess.run(base + [str(design)], env=env, cwd=ROOT, preexec_fn=closed(1),
                        stderr=subprocess.PIPE, timeout=120)
    assert ok.returncode == 1 and b"Traceback" not in ok.stderr
    assert ok.stderr.decode().count("\n") == 1 and b"standard output is closed" in ok.stderr
    assert subprocess.run(base + [str(design)], env=env, cwd=ROOT, preexec_fn=closed(2),
                          stdout=subprocess.DEVNULL, timeout=120).returncode == 0
    assert subprocess.run(base + [str(tmp_path / "missing.json")], env=env, cwd=ROOT,
                          preexec_fn=closed(1, 2), timeout=120).returncode == 2


def test_a_headless_command_ends_the_usual_way(design):
    """console() of a headless command ends through SystemExit, so the interpreter's own ending
    runs (an atexit handler the child registers prints; ``os._exit`` would have skipped it)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('atexit ran', file=sys.stderr, flush=True))\n"
            "import designer.cli as cli\n"
            f"sys.argv = ['dpu-designer', 'validate', {str(design)!r}]\n"
            "cli.console()\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"atexit ran" in done.stderr and b"components" in done.stdout

