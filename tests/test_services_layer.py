"""The service layer both the CLI and the window call (issue #20): one style for window and report,
the report drawing the canvas it is handed, and the window's workload chooser fitting as `new`."""

from pathlib import Path

import pytest

from designer.services import style


def test_window_and_report_use_one_style():
    """One colour and one name per scenario and breakdown part: the plots and the report's charts
    take them from designer.services.style (the report no longer imports the GUI for them)."""
    from designer.gui import plots
    from designer.report import build, charts

    assert plots.SCENARIO_COLOR is style.SCENARIO_COLOR is build.SCENARIO_COLOR
    assert plots.SCENARIO_LABEL is style.SCENARIO_LABEL is build.SCENARIO_LABEL
    assert plots.BREAKDOWN_COLORS is style.BREAKDOWN_COLORS is charts.PALETTE
    assert build.LABEL["dpu"] == "DPU-offloaded" and style.SCENARIO_COLOR["host"] == "#E69F00"
    from designer.engine.result import BREAKDOWN_KEYS

    assert len(style.BREAKDOWN_COLORS) >= len(BREAKDOWN_KEYS)  # a colour per part, none reused


def test_file_export_report_draws_the_canvas_scene_the_window_hands_it(qtbot, tmp_path, monkeypatch):
    """File > Export > PDF report passes the window's scene class to the report, so its topology
    picture is the canvas's, as the `report` command's is."""
    from designer.gui.scene import DesignScene
    from designer.gui.testing import open_window
    from designer.report import actions, build, topology_picture

    seen = []
    real = topology_picture.topology_scene

    def spy(design, catalog, canvas=None):
        scene = real(design, catalog, canvas)
        seen.append(type(scene))
        return scene

    monkeypatch.setattr(build, "topology_scene", spy)
    monkeypatch.setattr(actions, "_ask_path", lambda *a: Path(tmp_path / "r.pdf"))
    window = open_window(qtbot)
    actions.export_report(window)
    assert (tmp_path / "r.pdf").stat().st_size > 10_000
    assert seen == [DesignScene]


def test_the_window_workload_chooser_fits_as_new_does(qtbot):
    """The scenario panel's workload chooser calls services.workloads.fitted_workload: choosing
    GPT-3 175B on a 16-server design (128 GPUs) saves tp8 pp16 dp1 and the published batch."""
    from designer.gui.testing import open_window
    from designer.topology.templates import rail_optimized

    window = open_window(qtbot, rail_optimized(servers=16, storage="none"))
    panel = window.scenario
    panel.workload.activated.emit(panel.workload.findData("gpt3-175b"))
    assert window.design.workload == {"preset": "gpt3-175b", "pp": 16, "dp": 1, "gpus": 0,
                                      "global_batch": 1536}
    window.editor.stack.undo()  # unchanged again: closing the window asks nothing
    assert window.design.workload.get("preset") != "gpt3-175b"


@pytest.mark.parametrize("module", ["designer.services.workloads", "designer.services.planning",
                                    "designer.services.style"])
def test_services_have_no_qt(module):
    import ast
    import importlib

    source = Path(importlib.import_module(module).__file__).read_text()
    names = {n.module or "" for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    names |= {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    assert not {n for n in names if n.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6", "superqt")}
