"""``dpu-designer FILE --screenshot OUT.png`` never hangs: every bad input or output is one line on
stderr and exit code 2, before any rendering; a good one writes the whole PNG."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "example.json"


def _cli(*args, cwd):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(cwd / "config"),
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "designer.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)  # a hang fails here


@pytest.mark.parametrize("case, args, words", [
    ("missing input", ["nope.json", "--screenshot", "o.png"], "no such design file"),
    ("input is a folder", [".", "--screenshot", "o.png"], "is a folder"),
    ("input is a pipe", ["fifo", "--screenshot", "o.png"], "not a regular file"),
    ("output is a pipe", [EXAMPLE, "--screenshot", "fifo"], "pipe (FIFO)"),
    ("output is a folder", [EXAMPLE, "--screenshot", "."], "is a folder"),
    ("output folder missing", [EXAMPLE, "--screenshot", "no/such/o.png"], "does not exist"),
    ("output is the input", ["copy.json", "--screenshot", "copy.json"], "is the input file"),
    ("output is a device", [EXAMPLE, "--screenshot", "/dev/null"], "is a device"),
    ("bad size", [EXAMPLE, "--screenshot", "o.png", "--size", "huge"], "WIDTHxHEIGHT"),
])
def test_bad_screenshot_input_or_output_is_one_line_and_exit_2(tmp_path, case, args, words):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "copy.json").write_bytes(EXAMPLE.read_bytes())
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2, (case, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in done.stderr, (case, lines)
    assert not (tmp_path / "o.png").exists()
    assert (tmp_path / "copy.json").read_bytes() == EXAMPLE.read_bytes()


def test_a_screenshot_is_written_whole_with_no_leftovers(tmp_path):
    done = _cli(EXAMPLE, "--screenshot", "shot.png", "--size", "800x600", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from PySide6.QtGui import QImage

    image = QImage(str(tmp_path / "shot.png"))
    assert (image.width(), image.height()) == (800, 600)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "config") == ["shot.png"]
    assert "propagateSizeHints" not in done.stderr  # no offscreen-plugin chatter
