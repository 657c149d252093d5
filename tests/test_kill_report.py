"""The report PDF is written atomically: a SIGKILL at any moment or a full disk leaves the old PDF
(or none), never a truncated one, and a full disk is exit 2 with one line, never exit 0."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer.paths import resources_dir

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = resources_dir() / "examples" / "example.json"
OLD = b"%PDF-1.4\n% the old report\n%%EOF\n"

#: the child runs the report command; ``mode`` names the step at which it kills itself
CHILD = r"""
import os, signal, sys
from designer import safeio
mode, design, out = sys.argv[1:4]

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

if mode == "before-rename":     # the new PDF is whole in its temporary file, not yet renamed
    safeio._fsync_path = die
elif mode == "after-rename":    # renamed, the folder not yet fsync'ed
    safeio._fsync_folder = die
from designer.cli import main
sys.exit(main(["report", design, "-o", out]))
"""


def child(mode: str, design: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", CHILD, mode, str(design), str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def whole_pdf(data: bytes) -> bool:
    return data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF") and len(data) > 10000


@pytest.fixture
def setup(tmp_path):
    design = tmp_path / "design.json"
    shutil.copy(EXAMPLE, design)
    out = tmp_path / "report.pdf"
    out.write_bytes(OLD)
    return design, out


def test_kill_before_the_rename_keeps_the_old_pdf(setup):
    design, out = setup
    proc = child("before-rename", design, out)
    assert proc.wait(300) == -signal.SIGKILL
    assert out.read_bytes() == OLD


def test_kill_after_the_rename_has_the_whole_new_pdf(setup):
    design, out = setup
    proc = child("after-rename", design, out)
    assert proc.wait(300) == -signal.SIGKILL
    assert whole_pdf(out.read_bytes())


def test_kill_at_random_moments(setup):
    """Killed at seeded random moments of the run: the file is the old one or a whole new one."""
    design, out = setup
    rng = random.Random(14)
    for _ in range(3):
        proc = child("plain", design, out)
        time.sleep(rng.uniform(0.5, 6.0))
        proc.kill()
        proc.wait(60)
        data = out.read_bytes()
        assert data == OLD or whole_pdf(data)


def test_real_full_disk_is_exit_2_and_changes_nothing(tmp_path):
    """A 64 kB tmpfs (the report is ~1 MB): exit 2, one line, the old file intact, no temporary left."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = mnt / "report.pdf"
        out.write_bytes(OLD)
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
        proc = subprocess.run([sys.executable, "-m", "designer.cli", "report", str(EXAMPLE), "-o", str(out)],
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2
        assert proc.stderr.strip() == f"error: disk full while writing {out}; nothing was changed"
        assert out.read_bytes() == OLD
        assert sorted(p.name for p in mnt.iterdir()) == ["report.pdf"]
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_simulated_full_disk_in_process(tmp_path, monkeypatch, capsys):
    """ENOSPC from the file system while the PDF goes to disk (monkeypatched fsync)."""
    import errno

    from designer.cli import main

    out = tmp_path / "report.pdf"
    out.write_bytes(OLD)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert main(["report", str(EXAMPLE), "-o", str(out)]) == 2
    assert "disk full while writing" in capsys.readouterr().err
    assert out.read_bytes() == OLD
