"""New from template → NVL72 racks with a front-end network, then Run (F5): the dialog offers the
nvl72 template from its option specs and the design it makes runs at once."""

import pytest
from PySide6.QtWidgets import QComboBox, QDialog

from designer.gui.testing import open_window
from designer.gui.template_dialog import TemplateDialog


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def test_nvl72_from_the_template_dialog_runs(qtbot, monkeypatch):
    def answer(dialog):
        dialog.kind.setCurrentIndex(dialog.kind.findData("nvl72"))
        fields = dialog.fields["nvl72"]
        fields["servers"].setValue(2)
        for name, value in (("server", "gb300-nvl72"), ("frontend", "ethernet"), ("storage", "none")):
            box = fields[name]
            assert isinstance(box, QComboBox)
            box.setCurrentIndex(box.findData(value))
        assert fields["switch"].currentData() == ""  # "(default)": chosen by the NIC
        return QDialog.Accepted

    monkeypatch.setattr(TemplateDialog, "exec", answer)
    w = open_window(qtbot)
    w.new_from_template()
    topo = w.design.topology
    assert [s.model for s in topo.servers()] == ["gb300-nvl72"] * 2
    assert {s.model for s in topo.switches() if not s.props.get("frontend")} == {"q3400"}
    assert any(s.props.get("frontend") for s in topo.switches())
    assert w.design.workload.get("preset")
    got = []
    w.load_run_view().result_ready.connect(lambda *a: got.append(a))
    w.actions_by_name["run"].trigger()
    view = w.run_view
    qtbot.waitUntil(lambda: bool(got) or view.status.text().startswith("Error"), timeout=60_000)
    view.cancel(wait=True)
    assert got, view.status.text()
    assert got[0][0].gpus > 0 and got[0][0].iteration_time_s > 0
