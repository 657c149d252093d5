"""Run → Optimize… (designer.gui.optimize_dialog), offscreen: the search fills the plot and the front,
Open design puts a front design in the window, and the menu reaches the dialog; the plot keeps the
CLI's bounded Chart (not every row), every design can stream to a CSV/Parquet file, and Cancel
keeps the rows finished there."""

import csv
import threading

import pytest

pytest.importorskip("pytestqt")


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


@pytest.fixture()
def window(qtbot):
    from designer.gui.mainwindow import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    yield w
    w.close()


def _small(dialog):
    dialog.workload.setCurrentIndex(dialog.workload.findData("llama3-8b"))
    dialog.gpus.setValue(64)
    dialog.servers.setText("dgx-h100")
    dialog.switches.setText("qm9700")
    dialog.workers.setValue(1)


def test_search_plots_points_and_opens_a_front_design(window, qtbot, tmp_path):
    window.actions_by_name["optimize"].trigger()
    dialog = window.optimize_dialog
    _small(dialog)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=120_000)
    o = dialog.outcome
    assert o.evaluated == 6 and dialog.chart.count == 6 and not hasattr(dialog, "rows")
    assert dialog.table.rowCount() == len(o.front) > 0
    shown = sum(len(dialog.scatter[k].getData()[0] if dialog.scatter[k].getData()[0] is not None else [])
                for k in dialog.scatter)
    assert shown == 6
    front_x = dialog.scatter["front"].getData()[0]
    assert sorted(front_x) == sorted(r["training_time_days"] for r in o.front)
    dialog.grab().save(str(tmp_path / "optimize.png"))
    dialog.table.selectRow(0)
    assert dialog.open_selected()
    assert window.design.workload["preset"] == "llama3-8b"
    assert sum(s.model == o.front[0]["server"] for s in window.design.topology.servers()) == 8


def test_a_target_nothing_meets_says_what_to_change(window, qtbot):
    window.open_optimize()
    dialog = window.optimize_dialog
    _small(dialog)
    dialog.days.setValue(0.5)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.search_button.isEnabled(), timeout=120_000)
    assert "raise the deadline" in dialog.status.text() and dialog.table.rowCount() == 0


def test_a_bad_target_is_refused_in_words(window, qtbot):
    window.open_optimize()
    dialog = window.optimize_dialog
    _small(dialog)
    dialog.gpus.setValue(60)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.search_button.isEnabled(), timeout=60_000)
    assert dialog.status.text().startswith("Cannot search") and "whole number" in dialog.status.text()


def test_the_plot_keeps_the_clis_bounded_chart_not_every_row(window, qtbot, monkeypatch):
    """With the chart's cap at 2 the 6 designs are sampled as `optimize --report` samples them: the
    plot shows the sample and the front, and its title says it is a sample."""
    from designer.services import optimize as opt

    monkeypatch.setattr(opt, "PLOTTED", 2)
    window.open_optimize()
    dialog = window.optimize_dialog
    _small(dialog)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=120_000)
    cli = opt.Chart(cap=2)
    rows = []
    opt.optimize(dialog._target, window.catalog, workers=1, on_row=rows.append)
    for r in rows:
        cli.add(r)
    assert dialog.chart.points() == cli.points() and len(cli.points()) < 6 and cli.sampled
    assert [r["index"] for r in dialog.chart.front.rows] == [r["index"] for r in dialog.outcome.front]
    shown = set()
    for k in ("miss", "meet"):
        xs, ys = dialog.scatter[k].getData()
        shown |= set(zip(xs if xs is not None else [], ys if ys is not None else []))
    front = {(r["training_time_days"], r["capex_USD"] / 1e6) for r in dialog.outcome.front}
    assert shown | front == {(x, y) for x, y, _ in cli.points()} | front
    title = dialog.plot.getPlotItem().titleLabel.text
    assert cli.shown(sep="<br>") in title and "4 of 6" in title
    assert "An even sample of the designs run (" in cli.title() and cli.title().endswith("against CapEx")


def test_every_design_goes_to_the_chosen_file_as_optimize_out_writes_it(window, qtbot, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    from designer import cli

    chosen = tmp_path / "designs"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(chosen), "CSV (*.csv)"))
    window.open_optimize()
    dialog = window.optimize_dialog
    _small(dialog)
    dialog.browse.click()
    assert dialog.out.text() == str(chosen) + ".csv"
    dialog.start()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=120_000)
    assert "every design written to" in dialog.status.text()
    got = (tmp_path / "designs.csv").read_bytes()
    want = tmp_path / "cli.csv"
    assert cli.main(["optimize", "--workload", "llama3-8b", "--gpus", "64", "--server-models", "dgx-h100",
                     "--switches", "qm9700", "--workers", "1", "--out", str(want)]) == 0
    assert got == want.read_bytes() and len(got.splitlines()) == 7


def test_a_bad_file_name_is_refused_before_the_search(window, qtbot, tmp_path):
    window.open_optimize()
    dialog = window.optimize_dialog
    _small(dialog)
    dialog.out.setText(str(tmp_path / "designs.xlsx"))
    dialog.start()
    assert dialog.status.text().startswith("Cannot search") and ".csv or a .parquet" in dialog.status.text()
    assert dialog.worker is None and dialog.search_button.isEnabled()


def test_cancel_keeps_the_rows_written_and_says_how_many(window, qtbot, monkeypatch, tmp_path):
    from designer.services import optimize as opt

    real, gate = opt.evaluate, threading.Event()

    def slow(point, target, catalog=None):
        if point.index >= 2:
            gate.wait(30)
        return real(point, target, catalog)

    monkeypatch.setattr(opt, "evaluate", slow)
    window.open_optimize()
    dialog = window.optimize_dialog
    _small(dialog)
    path = tmp_path / "designs.csv"
    dialog.out.setText(str(path))
    dialog.start()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 2, timeout=120_000)
    dialog.cancel()
    assert dialog.status.text().startswith(f"Cancelled: {path} keeps")
    gate.set()  # the point running finishes; no more are handed out
    qtbot.waitUntil(lambda: "keeps the first" in dialog.status.text(), timeout=60_000)
    rows = list(csv.DictReader(path.open()))
    assert 2 <= len(rows) < 6 and [r["index"] for r in rows] == [str(i) for i in range(len(rows))]
    assert dialog.status.text() == f"Cancelled: {path} keeps the first {len(rows)} of the 6 designs (in search order)"
    assert dialog.search_button.isEnabled() and not dialog.cancel_button.isEnabled()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
