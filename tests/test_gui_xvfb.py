"""The window under a real X server (Xvfb), as a user first sees it, and the X library check.

Offscreen renders set the window's size before anything is drawn, which hid that the example
opened zoomed to 1-2 % under X (the design was fitted while the view still had its default size).
These tests start Xvfb, open the window exactly as ``dpu-designer`` does (show, then the event
loop; no explicit zoom to fit) and look at the real X framebuffer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: opens the window like designer.gui.app.run_gui (show, process events), then reports what the
#: canvas shows and grabs the X screen; prints one JSON line
PROBE = textwrap.dedent("""
    import json, sys, time
    from designer.gui.app import make_app
    from designer.gui.mainwindow import MainWindow, example_path
    from designer.topology import fileformat

    app = make_app()
    path = example_path()
    window = MainWindow(fileformat.load(path), str(path))
    window.show()
    end = time.monotonic() + 8
    while time.monotonic() < end and (window.check_pending or not window.view.isVisible()):
        app.processEvents()
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        app.processEvents()
    view = window.view
    port = view.viewport()
    shown = view.mapFromScene(window.scene.content_rect()).boundingRect()
    seen = shown.intersected(port.rect())
    origin = port.mapToGlobal(port.rect().topLeft())
    shot = app.primaryScreen().grabWindow(0)
    shot.save(sys.argv[1], "PNG")
    print(json.dumps({"scale": view.scale_factor(), "port": [port.width(), port.height()],
                      "design": [shown.width(), shown.height()], "seen": [seen.width(), seen.height()],
                      "origin": [origin.x(), origin.y()], "platform": app.platformName()}))
    window.autosaver.discard()
""")


def _start_xvfb(tmp_path: Path):
    """Start Xvfb on a free display; returns (process, ':N')."""
    read, write = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1920x1200x24",
                             "-nolisten", "tcp"], pass_fds=(write,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(write)
    number = b""
    with os.fdopen(read, "rb") as fh:
        while not number.endswith(b"\n"):
            chunk = fh.read(1)
            if not chunk:
                break
            number += chunk
    if not number.strip():
        proc.kill()
        pytest.fail("Xvfb started but gave no display number")
    return proc, f":{number.decode().strip()}"


@pytest.fixture()
def xvfb(tmp_path):
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install -y xvfb); the real-X test needs it")
    from designer.gui.platform_check import missing_libraries

    missing = missing_libraries()
    if missing:
        pytest.skip(f"Qt's xcb plugin cannot load here, missing {', '.join(missing)}")
    proc, display = _start_xvfb(tmp_path)
    yield display
    proc.terminate()
    proc.wait(timeout=10)


def test_the_example_fills_the_canvas_when_the_window_first_opens_under_x(xvfb, tmp_path):
    from PySide6.QtGui import QColor, QImage

    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "PYTHONPATH": str(ROOT)}
    shot = tmp_path / "x-screen.png"
    out = subprocess.run([sys.executable, "-c", PROBE, str(shot)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["platform"] == "xcb"
    port_w, port_h = info["port"]
    assert port_w > 400 and port_h > 300, info
    # fitted: the design spans most of the canvas in one direction and all of it is in view
    assert max(info["design"][0] / port_w, info["design"][1] / port_h) > 0.6, info
    assert info["seen"] == info["design"], info
    assert info["scale"] > 0.05, info  # the bug: 0.02 (the view's smallest zoom)
    # the real X pixels: something is drawn all over the canvas, not in one small corner
    image = QImage(str(shot))
    x0, y0 = info["origin"]
    background = QColor("#fbfbfc")
    cells, grid = 0, 6
    for i in range(grid):
        for j in range(grid):
            found = False
            for dx in range(0, port_w // grid, 3):
                for dy in range(0, port_h // grid, 3):
                    c = image.pixelColor(x0 + i * port_w // grid + dx, y0 + j * port_h // grid + dy)
                    if abs(c.red() - background.red()) + abs(c.green() - background.green()) \
                            + abs(c.blue() - background.blue()) > 60:
                        found = True
                        break
                if found:
                    break
            cells += found
    assert cells >= 0.5 * grid * grid, f"only {cells} of {grid * grid} canvas cells show the design"


def test_a_missing_x_library_gives_the_apt_line_not_an_abort():
    from designer.gui.platform_check import APT_LINE, XCB_LIBRARIES, display_problem

    libs = {**XCB_LIBRARIES, "libxcb-icccm-missing.so.4": "libxcb-icccm4"}
    text = display_problem({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"}, libs)
    assert "libxcb-icccm-missing.so.4" in text
    assert "sudo apt-get install -y libxcb-icccm4 " in text
    assert APT_LINE in text and "\n" not in text
    for pkg in ("libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0", "libxcb-cursor0"):
        assert pkg in APT_LINE
    # offscreen renders and Wayland sessions need none of it
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, libs) is None
    assert display_problem({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}, libs) is None \
        or not sys.platform.startswith("linux")


def test_the_cli_says_what_is_missing_in_one_line_and_exits_2(tmp_path, monkeypatch, capsys):
    from designer import cli
    from designer.gui import platform_check

    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr(platform_check, "XCB_LIBRARIES",
                        {**platform_check.XCB_LIBRARIES, "libxcb-keysyms-gone.so.1": "libxcb-keysyms1"})
    assert cli.main([]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "libxcb-keysyms-gone.so.1" in err
    assert "apt-get install -y libxcb-keysyms1" in err
    monkeypatch.delenv("DISPLAY")
    monkeypatch.setattr(platform_check, "XCB_LIBRARIES", {})
    assert cli.main([]) == 2
    assert "DISPLAY is not set" in capsys.readouterr().err
