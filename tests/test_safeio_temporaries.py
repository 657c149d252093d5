"""A killed run leaves no hidden temporary file behind for good (issue 23): SIGTERM and Ctrl-C
remove it at once (``designer.cli.console``), and the one a SIGKILL leaves is removed by the next
write of the same file, once its process is gone (``safeio._remove_stale_temporaries``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer import safeio
from designer.paths import resources_dir

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = resources_dir() / "examples" / "example.json"

#: the child writes ``out`` through atomic_output and stops inside the block (the temporary file
#: made, the target not yet replaced): it says so on stderr, then waits to be killed
HOLD = r"""
import sys, time
from designer import safeio
out = sys.argv[1]
with safeio.atomic_output(out) as tmp:
    tmp.write_text("half a file")
    print("ready", file=sys.stderr, flush=True)
    time.sleep(60)
"""

#: ``dpu-designer run FILE --timeline OUT`` as the program runs it (console()), stopped while the
#: timeline CSV is being written
TIMELINE = r"""
import sys, time
from designer import cli, safeio
real = safeio._fsync_path
def hold(path):
    print("ready", file=sys.__stderr__, flush=True)
    time.sleep(60)
safeio._fsync_path = hold
sys.argv = ["dpu-designer", "run", sys.argv[1], "--timeline", sys.argv[2]]
cli.console()
"""


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")


def _start(code: str, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=_env(), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stderr.readline()
    assert line.strip() == b"ready", line + proc.stderr.read()
    return proc


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_temporary_name_says_host_and_process(tmp_path):
    seen = []
    with safeio.atomic_output(tmp_path / "out.csv") as tmp:
        seen.append(tmp.name)
        tmp.write_text("x")
    prefix = safeio._temp_prefix(tmp_path / "out.csv")
    assert seen[0].startswith(f"{prefix}{os.getpid()}.") and seen[0].endswith(".tmp.csv")
    assert _temporaries(tmp_path) == []


def test_a_sigkilled_writers_temporary_is_removed_by_the_next_write(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old")
    proc = _start(HOLD, str(out))
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    left = _temporaries(tmp_path)
    assert len(left) == 1 and f".{proc.pid}." in left[0]  # what a kill leaves
    assert out.read_text() == "old"
    safeio.atomic_write_text(out, "new")
    assert _temporaries(tmp_path) == [] and out.read_text() == "new"


def test_a_running_writers_temporary_is_left_alone(tmp_path):
    out = tmp_path / "out.csv"
    proc = _start(HOLD, str(out))
    try:
        safeio.atomic_write_text(out, "mine")
        left = _temporaries(tmp_path)
        assert len(left) == 1 and f".{proc.pid}." in left[0]
    finally:
        proc.kill()
        proc.wait(30)


def test_other_files_are_never_removed(tmp_path):
    """Only this target's temporaries of dead processes: a user's dot file, another target's
    temporary and a name that merely looks alike stay."""
    out = tmp_path / "out.csv"
    dead = _dead_pid()
    keep = [".out.csv", f".other.csv.{safeio._host_tag()}.{dead}.abc_123.tmp.csv",
            f"{safeio._temp_prefix(out)}notapid.abc.tmp.csv", f".out.csv.otherhost.{dead}.abc.tmp.csv"]
    for name in keep:
        (tmp_path / name).write_text("keep")
    stale = tmp_path / f"{safeio._temp_prefix(out)}{dead}.abc_123.tmp.csv"
    stale.write_text("stale")
    assert safeio._remove_stale_temporaries(out) == 1
    assert not stale.exists() and all((tmp_path / n).exists() for n in keep)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(30)
    return proc.pid


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_terminated_run_removes_its_temporary_at_once(sig, code, tmp_path):
    design = tmp_path / "design.json"
    design.write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / "timeline.csv"
    proc = _start(TIMELINE, str(design), str(out))
    assert len([n for n in _temporaries(tmp_path) if n.startswith(".timeline.csv.")]) == 1
    proc.send_signal(sig)
    assert proc.wait(60) == code
    err = proc.stderr.read()
    assert b"Traceback" not in err and (b"terminated" in err or b"interrupted" in err)
    assert _temporaries(tmp_path) == [] and not out.exists()
