"""New from template, then Run (F5): the design gets a runnable workload, and an engine error
reaches the user whole and in the window's words (issue #14)."""

import pytest
from PySide6.QtWidgets import QDialog

from designer.gui.messages import gui_words
from designer.gui.testing import open_window
from designer.gui.template_dialog import TemplateDialog


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def _template(monkeypatch, name: str, **values) -> None:
    """Answer the template dialog with ``name`` and ``values`` typed into its fields."""
    def run(dialog):
        dialog.kind.setCurrentIndex(dialog.kind.findData(name))
        for key, value in values.items():
            dialog.fields[name][key].setValue(value)
        return QDialog.Accepted

    monkeypatch.setattr(TemplateDialog, "exec", run)


def _run(w, qtbot):
    got = []
    w.load_run_view().result_ready.connect(lambda *a: got.append(a))
    w.actions_by_name["run"].trigger()
    view = w.run_view
    qtbot.waitUntil(lambda: bool(got) or view.status.text().startswith("Error"), timeout=60_000)
    view.cancel(wait=True)
    return got


def test_a_rail_template_of_256_servers_runs_at_once(qtbot, monkeypatch):
    w = open_window(qtbot)
    _template(monkeypatch, "rail-optimized", servers=256)
    w.new_from_template()
    assert len(w.design.topology.servers()) == 256
    workload = w.design.workload
    assert workload.get("preset")  # a model is chosen, shown in the panel
    assert w.scenario.workload.currentData() == workload["preset"]
    assert w.scenario.wfields["global_batch"].value() == workload["global_batch"]
    got = _run(w, qtbot)
    assert got, w.run_view.status.text()
    host, dpu = got[0]
    # Llama 3 8B's batch of 512 kept (issue #24): 512 replicas of tp 2, 1,024 of the 2,048 GPUs
    assert workload["dp"] == 512 and "pp" not in workload and "tp" not in workload
    assert host.gpus == 1024 and host.iteration_time_s > 0
    assert w.run_view.error_box.isHidden()


def test_an_engine_error_is_shown_whole_in_the_windows_words(qtbot, monkeypatch):
    w = open_window(qtbot)
    _template(monkeypatch, "rail-optimized", servers=256)
    w.new_from_template()
    batch = w.design.workload["global_batch"] + 1  # no longer whole micro-batches per replica
    w.scenario.wfields["global_batch"].setValue(batch)
    assert w.design.workload["global_batch"] == batch
    assert not _run(w, qtbot)
    box = w.run_view.error_box
    assert box.isVisible() and box.wordWrap()
    text = box.text()
    assert f"global batch {batch}" in text and "Global batch" in text and "--" not in text
    assert text.rstrip().endswith("field")  # the whole message, not cut
    # the next run hides it
    w.scenario.wfields["global_batch"].setValue(batch - 1)
    assert _run(w, qtbot) and box.isHidden()


def test_option_names_become_field_names():
    assert gui_words("workload: global batch 512 is not a multiple of dp x micro-batch = 2048 x 1; "
                     "change --global-batch") == (
        "Workload: global batch 512 is not a multiple of dp x micro-batch = 2048 x 1; change the "
        "Global batch field")
    assert gui_words("needs more GPUs than the design has (8); lower --tp/--pp or add GPU servers") \
        == "needs more GPUs than the design has (8); lower the Tensor parallel / Pipeline parallel " \
           "fields or add GPU servers"
    assert gui_words("'micro_batch' must be at least 1") == "Micro-batch must be at least 1"
    assert gui_words("use --set scenario.tenants=2") == "use the scenario setting tenants"
    assert gui_words("an unknown --frobnicate stays") == "an unknown --frobnicate stays"
