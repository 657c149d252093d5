"""The parts connected in the real main window: Run (F5) with the canvas overlay and the run's figures
of the selection, File → Export, Run → Sweep, and the workload panel on ``{"preset": ...}`` designs."""

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.gui.runview import bottleneck_marks
from designer.report.actions import MAX_PICTURE_SIDE
from designer.gui.testing import open_window
from designer.topology.templates import leaf_spine

pytest.importorskip("pytestqt")


@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)

    def fail(_parent, title, text, *a, **k):
        raise AssertionError(f"message box {title}: {text}")

    monkeypatch.setattr(QMessageBox, "warning", fail)
    monkeypatch.setattr(QMessageBox, "information", fail)
    monkeypatch.setattr(QMessageBox, "critical", fail)


@pytest.fixture
def window(qtbot):
    w = open_window(qtbot)
    qtbot.waitUntil(lambda: w.run_view is not None, timeout=5000)  # docked once shown
    yield w
    w.cancel_run()
    if w.sweep_dialog is not None:
        w.sweep_dialog.cancel(wait=True)


@pytest.fixture
def overlay_calls(window, monkeypatch):
    """What the window hands to the canvas's ``show_utilization``."""
    calls = []
    monkeypatch.setattr(window.scene, "show_utilization",
                        lambda util, marked=frozenset(), peak=None: calls.append((util, set(marked))),
                        raising=False)
    return calls


def run_in_window(window, qtbot):
    """F5 and its (host, DPU) results, once the run has ended. The wait is armed before the
    trigger and ends on the run's one ``run_ended`` signal, however it ends: a failed run fails
    here with its own message (not a silent wait for a result that never comes)."""
    view = window.run_view
    results = []

    def got(host, dpu):
        results.append((host, dpu))

    view.result_ready.connect(got)
    try:
        with qtbot.waitSignal(view.run_ended, timeout=60_000) as ended:
            window.actions_by_name["run"].trigger()
    finally:
        view.result_ready.disconnect(got)
    assert ended.args == ["Done"], ended.args
    assert len(results) == 1 and not view.is_running()
    return results[0]


def test_the_engine_is_not_imported_until_the_window_is_shown():
    code = ("import sys\n"
            "from PySide6.QtWidgets import QApplication\n"
            "app = QApplication([])\n"
            "from designer.gui.mainwindow import MainWindow\n"
            "w = MainWindow()\n"
            "assert 'scipy' not in sys.modules and 'designer.engine.timeline' not in sys.modules\n"
            "assert w.run_view is None\n"
            "w.show()\n"
            "for _ in range(5): app.processEvents()\n"
            "assert w.run_view is not None and 'designer.engine.timeline' in sys.modules\n"
            "assert w.docks['Run'].widget() is w.run_view\n"
            "w.close()\n")
    env = {**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parent.parent, timeout=60)
    assert done.returncode == 0, done.stderr


def test_f5_runs_both_scenarios_and_colours_the_canvas(window, qtbot, overlay_calls):
    host, dpu = run_in_window(window, qtbot)
    view = window.run_view
    assert view.status.text() == "Done" and view.summaries.keys() == {"host", "dpu"}
    assert window.docks["Run"].isVisible()
    util, marked = overlay_calls[-1]
    links = set(window.design.topology.links)
    assert set(util) == links and all(0.0 <= u <= 1.0 for u in util.values())
    # host-managed by default, coloured by the time-averaged figure (issue 23: not the phase peak)
    assert util == dict(zip(host.links.ids, host.link_mean_utilization().tolist()))
    assert marked == bottleneck_marks(host, window.design.topology)  # only what the engine names

    view.set_overlay("dpu")
    assert overlay_calls[-1][0] == dict(zip(dpu.links.ids, dpu.link_mean_utilization().tolist()))
    view.set_overlay(None)
    assert overlay_calls[-1] == (None, set())


def test_the_selection_shows_its_figures_from_the_run(window, qtbot):
    host, dpu = run_in_window(window, qtbot)
    topo = window.design.topology
    by_host = {l.id: l for l in host.links}
    switch = topo.switches()[0]
    window.scene.select_ids([switch.id])
    table = window.run_view.figures
    cables = {l.id for l in topo.links_of(switch.id)}
    assert table.rowCount() == min(len(cables), 40)
    assert switch.id in window.run_view.figures_title.text()
    first = table.item(0, 0).toolTip().split(":")[0]
    assert first in cables
    mean = dict(zip(host.links.ids, host.link_mean_utilization().tolist()))[first]
    assert table.item(0, 1).text() == (f"{100 * mean:.0f}% · {100 * by_host[first].utilization:.0f}% "
                                       f"{by_host[first].phase}")  # the canvas's figure, then the peak
    busiest = max(by_host[c].utilization for c in cables)
    assert by_host[first].utilization == busiest  # busiest first

    link = next(iter(topo.links.values()))
    window.scene.select_ids([link.id])
    assert table.rowCount() == 1 and table.item(0, 0).text() == f"{link.a} – {link.b}"
    dpu_link = next(l for l in dpu.links if l.id == link.id)
    assert f"· {100 * dpu_link.utilization:.0f}%" in table.item(0, 2).text()

    window.scene.select_ids([])
    assert table.rowCount() == 0


def test_a_new_document_drops_the_results_and_the_overlay(window, qtbot, overlay_calls):
    run_in_window(window, qtbot)
    assert overlay_calls[-1][0] is not None
    window.set_document(leaf_spine(servers=2, storage="none"), None)
    assert overlay_calls[-1] == (None, set())
    assert window.run_view.results == {} and window.run_view.design is window.design


def test_closing_the_window_during_a_run_ends_the_thread(window, qtbot):
    window.actions_by_name["run"].trigger()
    worker = window.run_view.worker
    qtbot.waitUntil(lambda: window.run_view.plots.points("host") > 0, timeout=15_000)
    window.close()
    assert not worker.is_running()


def test_bottleneck_sentences_mark_what_they_name_and_nothing_else():
    topo = leaf_spine(servers=8, storage="none").topology
    leaf = next(s.id for s in topo.switches() if s.props.get("tier", "leaf") == "leaf")
    spine = next(n for n in topo.neighbors(leaf) if topo.components[n].kind == "switch")
    between = {l.id for l in topo.links_of(leaf) if {l.a, l.b} == {leaf, spine}}
    busy = next(l.id for l in topo.links.values() if leaf not in (l.a, l.b))

    class Result:
        links = [type("L", (), {"id": busy, "utilization": 1.0})()]  # busy, but named nowhere
        bottlenecks = [f"link {leaf} → {spine} saturates and limits DP all-reduce to 60% of NIC "
                       "line rate", "leaf-spine oversubscription 2:1 at nowhere."]

    assert between and bottleneck_marks(Result, topo) == between | {leaf, spine}
    Result.bottlenecks = []
    assert bottleneck_marks(Result, topo) == set()


# ----------------------------------------------------------------------------------- export
def _answer(monkeypatch, paths):
    queue = list(paths)
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: (str(queue.pop(0)), "PNG image (*.png)"))
    return queue


def _action(menu, start):
    return next(a for a in menu.actions() if a.text().replace("&", "").startswith(start))


def test_file_export_writes_canvas_selection_plot_and_report(window, qtbot, tmp_path, monkeypatch):
    run_in_window(window, qtbot)
    menu = window.export_menu
    assert menu.menuAction() in window.menuBar().actions()[0].menu().actions()
    queue = _answer(monkeypatch, [tmp_path / "canvas.png", tmp_path / "canvas.svg",
                                  tmp_path / "sel.svg", tmp_path / "gpu.png", tmp_path / "gpu.svg",
                                  tmp_path / "report.pdf"])
    _action(menu, "Canvas").trigger()
    _action(menu, "Canvas").trigger()
    window.scene.select_ids([window.design.topology.switches()[0].id])
    _action(menu, "Selection").trigger()
    plots = _action(menu, "Plot").menu()
    plots.aboutToShow.emit()
    titles = [a.text() for a in plots.actions()]
    assert "GPU utilization" in titles and "Iteration breakdown" in titles
    _action(plots, "GPU utilization").trigger()
    _action(plots, "GPU utilization").trigger()
    _action(menu, "PDF").trigger()
    assert not queue

    png = QImage(str(tmp_path / "canvas.png"))
    assert 200 < max(png.width(), png.height()) <= MAX_PICTURE_SIDE and png.height() > 100
    for name in ("canvas.svg", "sel.svg", "gpu.svg"):
        text = (tmp_path / name).read_text()
        assert "<svg" in text and "<path" in text, name
    assert len((tmp_path / "sel.svg").read_text()) < len((tmp_path / "canvas.svg").read_text())
    plot_png = QImage(str(tmp_path / "gpu.png"))
    assert plot_png.size().width() > 100 and plot_png.size() != QSize(16, 16)
    pdf = (tmp_path / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    from pypdf import PdfReader

    assert len(PdfReader(str(tmp_path / "report.pdf")).pages) >= 2
    assert "wrote" in window._status.text()


# ------------------------------------------------------------------------------------ sweep
def test_sweep_dialog_runs_servers_and_shows_plot_and_table(window, qtbot):
    window.actions_by_name["sweep"].trigger()
    dialog = window.sweep_dialog
    assert dialog.isVisible()
    assert dialog.param.findText("servers") >= 0 and dialog.param.findText("gpu_server.gpu_count") >= 0
    dialog.param.setCurrentText("servers")
    assert dialog.values.text() == "4,8,16,32" and dialog.present.text() == "now 8"
    dialog.values.setText("4, 8")
    dialog.run_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=60_000)
    assert not dialog.busy()
    result = dialog.result
    assert result.param == "servers" and result.values == ((4,), (8,))
    days = result.series("host", "training_time_days")
    assert days[0] > 1.5 * days[1]  # half the GPUs: about twice the time
    table = dialog.plot.table
    assert table.rowCount() == 2 and table.item(0, 0).text() == "4"
    from designer.services.style import figure

    assert table.item(1, 1).text() == figure("days", days[1])  # the precision run and compare print


def test_sweep_bad_input_and_cancel(window, qtbot):
    window.actions_by_name["sweep"].trigger()
    dialog = window.sweep_dialog
    dialog.param.setCurrentText("workload.tp")
    dialog.values.setText("1, two")
    dialog.run_button.click()
    assert "'two' is not a number" in dialog.status.text() and dialog.worker is None
    dialog.param.setCurrentText("fabric.speed")
    dialog.values.setText("1,2")
    dialog.run_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Error:"), timeout=10_000)
    assert "neither a component id nor a kind" in dialog.status.text()
    dialog.param.setCurrentText("scenario.tenants")
    dialog.values.setText(",".join(str(v) for v in range(1, 200)))
    dialog.run_button.click()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=20_000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=20_000)
    assert dialog.status.text().startswith("Cancelled") and dialog.progress.value() < 199
    assert dialog.run_button.isEnabled()


# ------------------------------------------------------------------------- workload panel
def test_workload_panel_shows_and_edits_a_preset_workload(qtbot):
    design = leaf_spine(servers=8, storage="none")
    design.workload = {"preset": "llama3-70b", "dp": 0, "gpus": 64, "global_batch": 1024}
    w = open_window(qtbot, design)
    panel = w.scenario
    assert panel.workload.currentData() == "llama3-70b"
    assert panel.wfields["tp"].isEnabled() and panel.wfields["tp"].value() == 8  # the catalog's
    assert panel.wfields["global_batch"].value() == 1024

    panel.wfields["tp"].setValue(4)
    assert w.design.workload == {"preset": "llama3-70b", "dp": 0, "gpus": 64,
                                 "global_batch": 1024, "tp": 4}
    w.editor.stack.undo()
    assert "tp" not in w.design.workload
    qtbot.waitUntil(lambda: panel.wfields["tp"].value() == 8, timeout=1000)

    panel.workload.activated.emit(panel.workload.findData("llama3-8b"))
    assert w.design.workload["preset"] == "llama3-8b" and w.design.workload["dp"] == 0
    assert w.design.workload["global_batch"] % (64 // 2) == 0  # whole micro-batches per replica
    w.editor.stack.undo()
    assert w.design.workload["preset"] == "llama3-70b"


def test_a_model_too_big_for_the_design_is_refused_with_the_reason(qtbot):
    design = leaf_spine(servers=1, storage="none")
    design.workload = {"preset": "llama3-8b", "dp": 0, "gpus": 8, "global_batch": 512}
    w = open_window(qtbot, design)
    panel = w.scenario
    panel.workload.activated.emit(panel.workload.findData("gpt3-175b"))
    assert w.design.workload["preset"] == "llama3-8b" and w.editor.stack.count() == 0
    assert w._status.text().startswith("Not done: workload:")
    assert panel.workload.currentData() == "llama3-8b"


def test_run_menu_opens_the_layout_search_and_closing_the_window_closes_it(window, qtbot):
    window.actions_by_name["plan"].trigger()
    dialog = window.plan_dialog
    assert dialog.isVisible() and dialog.parent() is window
    window.close()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)


def test_engine_results_show_host_smartnic_and_dpu_with_their_power(window, qtbot):
    run_in_window(window, qtbot)
    table = window.run_view.engine.table
    heads = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert {"host-managed", "SmartNIC-offloaded", "DPU-offloaded"} <= set(heads)
    labels = [table.item(r, 0).text().strip() for r in range(table.rowCount()) if table.item(r, 0)]
    assert "Adapter power (kW, max)" in labels and "Power" in labels
    row = labels.index("Adapter power (kW, max)")
    cols = [heads.index(h) for h in ("host-managed", "DPU-offloaded")]
    host_kw, dpu_kw = (float(table.item(row, c).text()) for c in cols)
    assert dpu_kw > host_kw > 0  # a BlueField draws more than the ConnectX a host run buys
    notes = window.run_view.engine.text.toPlainText()
    assert "SmartNIC-offloaded vs host-managed" in notes and "DPU-offloaded vs SmartNIC-offloaded" in notes
