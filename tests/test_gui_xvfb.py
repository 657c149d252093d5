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


# ------------------------------------------------------------------ issue 23: one number per fact
def _table_row(layout: str, label: str) -> list[str]:
    """The figures of the report table row named ``label`` in ``pdftotext -layout`` text (a long
    label wraps onto the next line, its figures stay on the first)."""
    import re

    lines = layout.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(.+?)\s{2,}(\S.*)$", line)
        if not m or not label.startswith(m.group(1)):
            continue
        head, rest = m.group(1), m.group(2)
        if head != label:
            tail = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if f"{head} {tail}" != label:
                continue
        return rest.split()
    raise AssertionError(f"no row '{label}' in the report")


def _pdf_text(path) -> str:
    out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_template_edit_run_report_show_one_number_per_fact_under_x(xvfb, tmp_path):
    """Issue 23's acceptance: under a real X server, New from template (64 BlueField-3 servers,
    rail-optimized) -> make one link one lane -> Run -> report and cabling CSV. The status bar, the
    Engine results, the Timelines table, the report text and the CSV give the same cable count,
    iteration time and training times, each under the same name."""
    import csv
    import re

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is needed to read the report's text")
    from designer.cli import main
    from designer.report.names import STEADY_DAYS, TIMELINE_DAYS

    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "PYTHONPATH": str(ROOT)}
    probe = ROOT / "tests" / "xvfb_acceptance_probe.py"
    out = subprocess.run([sys.executable, str(probe), str(tmp_path)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["platform"] == "xcb" and info["finished"], info
    assert info["servers"] == 64
    # the status bar names both figures: the canvas's links and the physical cables
    found = re.search(r"([\d,]+) links \(([\d,]+) cables\)", info["status"])
    assert found, info["status"]
    links, cables = (int(g.replace(",", "")) for g in found.groups())
    assert cables > links  # the rail links are two-lane: the numbers differ, so the names matter
    # the cabling CSV: one row per cable
    design_file = info["design"]
    plan = tmp_path / "cabling.csv"
    assert main(["export", design_file, "--cabling", str(plan)]) == 0
    with open(plan, newline="", encoding="utf-8") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) == cables
    # the report: the same cable total, iteration and training times under the same names
    pdf = tmp_path / "report.pdf"
    assert main(["report", design_file, "-o", str(pdf)]) == 0
    layout = _pdf_text(pdf)
    text = re.sub(r"\s+", " ", layout)
    assert _table_row(layout, "Total cables")[-1] == f"{cables:,}", "report cable total"
    assert f"{links:,} links ({cables:,} cables)" in text
    host, dpu = info["results"]["host"], info["results"]["dpu"]
    # Engine results (4 significant digits) and the report (3) round the same engine figure
    shown = [float(v) for v in (info["iteration"][0], info["iteration"][-1])]
    assert shown == pytest.approx([host["iteration_time_s"], dpu["iteration_time_s"]], rel=5e-4)
    row = _table_row(layout, "Iteration time (s)")  # host, SmartNIC, DPU, ...
    assert float(row[0]) == pytest.approx(host["iteration_time_s"], rel=5e-3)
    assert float(row[2]) == pytest.approx(dpu["iteration_time_s"], rel=5e-3)
    # steady-state training days: the window's text is the report's, to the digit
    steady = info["steady_days"]
    assert steady[0] == f"{host['training_time_days']:,.1f}"
    assert _table_row(layout, STEADY_DAYS)[0] == steady[0]
    # the timeline's training time, under the report's name and with its value (both tables)
    timeline = info["timeline_days"]
    assert _table_row(layout, TIMELINE_DAYS)[:1] == timeline[:1], (TIMELINE_DAYS, timeline)
    # both plot rows fit at the default window size (no scrolling)
    assert info["plots_scroll"] == 0, info
