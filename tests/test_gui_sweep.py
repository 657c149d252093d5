"""The app's sweep dialog: points on the process pool, the plot growing as they finish, Cancel
stopping the hand-out, the same figures as ``dpu-designer sweep`` (issues #25, #23)."""

import pytest

from designer.engine.compare import MODES
from designer.paths import resources_dir
from designer.topology.catalog import load_catalog
from designer.topology.fileformat import load

EXAMPLE = resources_dir() / "examples" / "example.json"


@pytest.fixture()
def dialog(qtbot):
    from designer.gui.sweepdialog import SweepDialog

    dlg = SweepDialog(load_catalog())
    qtbot.addWidget(dlg)
    dlg.set_design(load(EXAMPLE))
    yield dlg
    dlg.cancel(wait=True)


def test_dialog_sweeps_on_a_pool_and_equals_the_cli(dialog, qtbot, tmp_path):
    from designer.services.sweeping import sweep

    dialog.workers = 2
    dialog.param.setCurrentText("servers")
    dialog.values.setText("4,8,16")
    partial = []
    dialog.plot.show_result = lambda r, real=dialog.plot.show_result: (partial.append(len(r.values)), real(r))
    dialog.start()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=120_000)
    assert partial[:3] == [1, 2, 3]  # the plot grew point by point
    result = dialog.result
    assert result.axis() == [4, 8, 16] and all(set(r) == set(MODES) for r in result.rows)
    cli = sweep(load(EXAMPLE), "servers", [4, 8, 16], workers=1, seed=int(dialog.design.scenario.get("seed", 0)))
    assert result.to_json() == cli.to_json()
    names = [item.name() for item in dialog.plot.days.listDataItems()]
    assert names == ["host-managed", "SmartNIC-offloaded", "DPU-offloaded"]
    dialog.grab().save(str(tmp_path / "sweep.png"))


def test_cancel_stops_handing_out_points(dialog, qtbot):
    dialog.workers = 1
    dialog.param.setCurrentText("servers")
    dialog.values.setText(",".join(str(n) for n in range(2, 40, 2)))
    dialog.start()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=60_000)
    dialog.cancel(wait=True)
    assert dialog.status.text().startswith("Cancelled")
    assert dialog.run_button.isEnabled() and not dialog.cancel_button.isEnabled()
    assert 1 <= len(dialog.result.values) < 19


def test_bad_values_are_refused_in_the_dialog(dialog, qtbot):
    dialog.param.setCurrentText("gpu_server.gpu_count")
    dialog.values.setText("8,-1")
    dialog.start()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Error"), timeout=30_000)
    assert "must be a positive integer" in dialog.status.text()
    assert "Traceback" not in dialog.status.text()


def test_the_parameter_list_is_grouped_as_sweep_list_prints_it(dialog):
    """The dialog offers what `dpu-designer sweep FILE --list` prints: group headers (not
    choosable), then each group's parameters; choosing one fills values around its present one."""
    from PySide6.QtCore import Qt

    from designer.engine.sweep import sweepable

    combo = dialog.param
    items = [(combo.itemText(i), bool(combo.model().item(i).flags() & Qt.ItemFlag.ItemIsEnabled))
             for i in range(combo.count())]
    groups = sweepable(dialog.design, load_catalog())
    want = []
    for title, rows in groups:
        want.append((title[:1].upper() + title[1:], False))
        want += [(name, True) for name, _ in rows]
    assert items == want
    assert items[0] == ("Design size (regenerated from its template)", False) and items[1] == ("servers", True)
    assert combo.currentText() == "servers" and dialog.values.text() == "4,8,16,32"
    combo.setCurrentIndex(combo.findText("workload.global_batch"))
    assert dialog.present.text() == "now 512" and dialog.values.text() == "256,512,1024,2048"
