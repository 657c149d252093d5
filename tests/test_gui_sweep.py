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


def test_a_second_parameter_sweeps_the_grid_one_curve_per_value(dialog, qtbot):
    """Then by scenario.tenants: the grid servers x tenants runs through the same stream as
    `dpu-designer sweep --param servers ... --param scenario.tenants ...` (the same points and
    figures), drawn against servers as one curve per offload mode and tenants value."""
    from designer.engine.sweep import make_grid
    from designer.services.sweeping import sweep

    dialog.workers = 1
    dialog.param.setCurrentText("servers")
    dialog.values.setText("4,8")
    assert dialog.param2.currentText() == "" and dialog.values2.text() == ""
    dialog.param2.setCurrentIndex(dialog.param2.findText("scenario.tenants"))
    assert dialog.present2.text() == "now 1" and dialog.values2.text() == "1,2,4"
    dialog.values2.setText("1,2")
    dialog.start()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Done"), timeout=120_000)
    result = dialog.result
    assert result.params == ("servers", "scenario.tenants")
    assert result.values == ((4, 1), (4, 2), (8, 1), (8, 2)) and dialog.progress.value() == 4
    grid = make_grid(["servers", "scenario.tenants"], [[4, 8], [1, 2]])
    cli = sweep(dialog.design, grid, workers=1, seed=int(dialog.design.scenario.get("seed", 0)))
    assert result.to_json() == cli.to_json()
    items = dialog.plot.days.listDataItems()
    assert [i.name() for i in items] == [f"{mode}, scenario.tenants = {t}" for t in (1, 2)
                                         for mode in ("host-managed", "SmartNIC-offloaded", "DPU-offloaded")]
    for item, (t, mode) in zip(items, [(t, m) for t in (1, 2) for m in MODES]):
        x, y = item.getData()
        assert list(x) == [4, 8]
        want = [row[mode]["training_time_days"] for v, row in zip(result.values, result.rows) if v[1] == t]
        assert list(y) == pytest.approx(want)
    table = dialog.plot.table
    assert table.rowCount() == 4 and [table.horizontalHeaderItem(c).text() for c in (0, 1)] == \
        ["servers", "scenario.tenants"]
    assert [table.item(2, 0).text(), table.item(2, 1).text()] == ["8", "1"]
    assert "4 point(s)" in dialog.status.text()


def test_a_bad_second_parameter_is_refused_in_the_dialog(dialog, qtbot):
    dialog.param.setCurrentText("servers")
    dialog.values.setText("4,8")
    dialog.param2.setCurrentText("servers")
    dialog.values2.setText("4")
    dialog.start()
    assert "already the first parameter" in dialog.status.text() and dialog.worker is None
    dialog.param2.setCurrentText("scenario.tenants")
    dialog.values2.setText("1,x")
    dialog.start()
    assert dialog.status.text().startswith("Values of scenario.tenants: 'x' is not a number")
    dialog.param2.setCurrentText("srv-8.gpu_count")
    dialog.values2.setText("8")
    dialog.start()  # srv-8 is gone at 4 servers: refused before any point, naming it
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Error"), timeout=30_000)
    assert "servers = 4 cannot set srv-8.gpu_count" in dialog.status.text()
    assert dialog.result is None
