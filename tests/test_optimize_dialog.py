"""Run → Optimize… (designer.gui.optimize_dialog), offscreen: the search fills the plot and the front,
Open design puts a front design in the window, and the menu reaches the dialog."""

import pytest
from PySide6.QtWidgets import QMessageBox

pytest.importorskip("pytestqt")


@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)


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
    assert o.evaluated == 6 and len(dialog.rows) == 6
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
