"""The installed command starts the window and stops cleanly; a stop signal keeps unsaved work."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer.gui import recovery
from designer.gui.testing import open_window

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_app_starts_on_the_example_and_closes_on_a_signal(tmp_path, sig):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "designer.cli"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(6)
        assert proc.poll() is None, proc.communicate()[1][-2000:]  # the window is up
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "Traceback" not in err
    assert recovery.leftovers() == [] or not (tmp_path / "dpu-designer" / "recovery").exists()


def test_quit_keeping_work_leaves_a_recovery_file(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    window = open_window(qtbot)
    first = next(iter(window.design.topology.components))
    window.editor.set_fields([first], "name", "renamed before the signal")
    assert window.is_modified()
    window.quit_keeping_work()
    kept = recovery.read(window.autosaver.file)
    assert kept.design.topology.components[first].name == "renamed before the signal"
    assert kept.design == window.design
    window.close()  # the window is gone already: closing it again asks nothing, keeps the file
    assert not window.isVisible() and window.autosaver.file.is_file()
