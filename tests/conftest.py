"""Shared test set-up: Qt offscreen before anything imports it; --run-slow for long fuzz/soak modes."""

import faulthandler
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("DPU_DESIGNER_NO_USER_CATALOG", "1")

import pytest  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the long fuzz/soak modes (marked slow)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long mode: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


#: a test still running after this long is stuck: every thread's stack is printed and the run
#: ends (exit 1), so a hang shows where it is instead of using up CI's time
HANG_S = 900


@pytest.fixture(autouse=True)
def _hang_watchdog():
    faulthandler.dump_traceback_later(HANG_S, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture()
def run_view(qtbot):
    """A shown run view (1200 x 800); a run still going at the end is cancelled and waited for."""
    from designer.gui.runview import RunView

    v = RunView()
    qtbot.addWidget(v)
    v.resize(1200, 800)
    v.show()
    yield v
    v.cancel(wait=True)


@pytest.fixture()
def gui_settings(tmp_path, monkeypatch):
    """What a window test needs around it: the app's settings in a folder of the test's own
    (``XDG_CONFIG_HOME``: recent files, dock state and autosave never touch the user's), and
    "discard" answered where closing a window with changes would ask (a dialog would block the
    run). A GUI test module takes it with ``pytestmark = pytest.mark.usefixtures("gui_settings")``."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
