"""Run → Plan layout dialog (designer.gui.plan_dialog), offscreen."""

import pytest

from PySide6.QtWidgets import QWidget

from designer.engine import plan
from designer.gui.editor import Editor
from designer.gui.plan_dialog import open_plan_dialog
from designer.topology import templates
from designer.topology.catalog import load_catalog

pytest.importorskip("pytestqt")


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def small():
    d = templates.rail_optimized(servers=2, storage="none")
    d.workload = {"preset": "megatron-gpt-1.7b", "dp": 0, "gpus": 0, "global_batch": 64, "micro_batch": 1}
    return d


class Window(QWidget):
    """What the dialog uses of the main window: ``design``, ``catalog`` and ``editor``."""

    def __init__(self, design):
        super().__init__()
        self.catalog = load_catalog()
        self.editor = Editor(design, self.catalog, self)

    @property
    def design(self):
        return self.editor.design


@pytest.fixture
def window(qtbot):
    w = Window(small())
    qtbot.addWidget(w)
    w.show()
    yield w
    if getattr(w, "plan_dialog", None) is not None:
        w.plan_dialog.cancel(wait=True)


def test_search_fills_the_table_and_apply_is_one_undo_step(window, qtbot):
    dialog = open_plan_dialog(window)
    assert dialog.isVisible() and open_plan_dialog(window) is dialog
    dialog.top.setValue(3)
    dialog.evaluate.setValue(3)
    before = dict(window.design.workload)
    dialog.search_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=60_000)
    assert not dialog.busy()
    result = dialog.result
    assert window.design.workload == before  # the search works on a copy
    assert dialog.table.rowCount() == len(result.shown) >= 1
    best = result.best
    assert dialog.table.item(0, 1).text().startswith(best.label)
    assert dialog.table.item(0, 2).text() == str(best.gpus) == str(
        best.layout["tp"] * best.layout.get("cp", 1) * best.layout["pp"] * best.layout["dp"])
    assert dialog.table.item(0, 3).text() == f"{best.iteration_time_s:.3f}"
    assert "dropped" in dialog.notes.toPlainText()

    row = next(i for i, c in enumerate(dialog._candidates) if not c.current)
    dialog.table.selectRow(row)
    chosen = dialog._candidates[row]
    assert dialog.apply_button.isEnabled()
    dialog.apply_button.click()
    assert window.design.workload == plan.apply(small(), chosen.layout)
    window.editor.stack.undo()
    assert window.design.workload == before


def test_cancel_stops_the_search_and_changes_nothing(window, qtbot):
    dialog = open_plan_dialog(window)
    dialog.evaluate.setValue(100)  # many engine runs: time to cancel
    before = dict(window.design.workload)
    dialog.search_button.click()
    qtbot.waitUntil(lambda: dialog.progress.maximum() > 0 and dialog.progress.value() > 0, timeout=60_000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=60_000)
    assert dialog.status.text().startswith("Cancelled")
    assert dialog.result is None and dialog.table.rowCount() == 0
    assert dialog.search_button.isEnabled() and not dialog.apply_button.isEnabled()
    assert window.design.workload == before


def test_an_impossible_workload_shows_the_reason(window, qtbot):
    # 405.9B parameters x 16 bytes over 16 GPUs: 406 GB of model state per GPU at best
    window.editor.set_design("workload", {"preset": "llama3-405b", "dp": 0, "gpus": 0,
                                          "global_batch": 16, "optimizer_sharded": False})
    dialog = open_plan_dialog(window)
    dialog.search_button.click()
    qtbot.waitUntil(lambda: dialog.search_button.isEnabled(), timeout=60_000)
    assert dialog.status.text().startswith("Error:")
    assert "fits in 85.9 GB per GPU" in dialog.status.text()
    assert dialog.table.rowCount() == 0 and dialog.search_button.isEnabled()
