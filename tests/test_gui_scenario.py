"""The scenario panel derives its rows from SCENARIO_SPEC: a setting added to the spec (a third
offload mode, a yes/no consumer, a number) gets an editor without touching the panel."""

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox

from designer.gui.editor import Editor
from designer.gui.scenario import ScenarioPanel
from designer.topology.catalog import load_catalog
from designer.topology.design import SCENARIO_SPEC, Design, Setting

NEW = {s.name: s for s in (
    Setting("offload", str, "host", "where the work runs", choices=("host", "smartnic", "dpu", "xpu")),
    Setting("frobnicate_nics", bool, False, "frobnicate every NIC"),
    Setting("queue_pairs", int, 4, "queue pairs per connection", minimum=1, maximum=64),
    Setting("link_flap_s", float, 0.0, "seconds between link flaps", minimum=0, maximum=1e6),
)}


def test_a_new_setting_of_each_type_gets_an_editor_that_edits_it_as_one_undo_step(qtbot):
    spec = {**SCENARIO_SPEC, **NEW}
    design = Design()
    design.scenario.update({k: s.default for k, s in NEW.items()})
    editor = Editor(design, load_catalog())
    panel = ScenarioPanel(editor, spec=spec)
    qtbot.addWidget(panel)
    assert set(panel.editors) == {k for k, s in spec.items() if s.type is not dict}

    box = panel.editors["offload"]
    assert isinstance(box, QComboBox)
    assert [box.itemData(i) for i in range(box.count())] == ["host", "smartnic", "dpu", "xpu"]
    box.activated.emit(box.findData("xpu"))
    assert design.scenario["offload"] == "xpu"

    check = panel.editors["frobnicate_nics"]
    assert isinstance(check, QCheckBox)
    check.click()
    assert design.scenario["frobnicate_nics"] is True

    spin = panel.editors["queue_pairs"]
    assert isinstance(spin, QSpinBox) and (spin.minimum(), spin.maximum()) == (1, 64)
    spin.setValue(16)
    assert design.scenario["queue_pairs"] == 16

    real = panel.editors["link_flap_s"]
    assert isinstance(real, QDoubleSpinBox) and real.maximum() == 1e6 and real.suffix() == " s"
    real.setValue(2.5)
    assert design.scenario["link_flap_s"] == 2.5

    for _ in range(4):
        editor.stack.undo()
    assert design.scenario["offload"] == "host" and design.scenario["queue_pairs"] == 4
    assert design.scenario["frobnicate_nics"] is False and design.scenario["link_flap_s"] == 0.0
    panel.refresh()  # the editors follow the model
    assert box.currentData() == "host" and not check.isChecked() and spin.value() == 4


def test_every_setting_of_the_real_spec_has_a_labelled_editor_with_its_meaning(qtbot):
    editor = Editor(Design(), load_catalog())
    panel = ScenarioPanel(editor)
    qtbot.addWidget(panel)
    form = panel.editors["offload"].parentWidget().layout()
    for key, spec in SCENARIO_SPEC.items():
        if spec.type is dict:
            continue  # per_server: set per server, in the inspector
        label = form.labelForField(panel.editors[key])
        assert label.text().strip() and "_" not in label.text(), key
        assert label.toolTip(), key
