"""Files through the window: save/load round trip, unsaved-changes title and close prompt, recent
files, recovery after a crash, new from template, and the --screenshot command line."""

import os
import subprocess
import sys
import textwrap

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMessageBox

from designer.gui import recovery
from designer.gui.mainwindow import MainWindow, example_path
from designer.gui.testing import open_window
from designer.topology import fileformat


@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def answers(monkeypatch):
    """Answers for the window's questions, in order; records what was asked."""
    state = {"queue": [], "asked": []}

    def question(parent, title, text, *args, **kwargs):
        state["asked"].append(text)
        return state["queue"].pop(0) if state["queue"] else QMessageBox.Discard

    monkeypatch.setattr(QMessageBox, "question", question)
    monkeypatch.setattr(QMessageBox, "critical", lambda p, t, text, *a: state["asked"].append(text))
    return state


def test_save_and_open_round_trip_through_the_window(qtbot, tmp_path, answers):
    w = open_window(qtbot)
    w.editor.set_fields(["sw-1"], "ports", 48)
    w.editor.move({"sw-2": (1000.0, 100.0)})
    assert w.isWindowModified() and "[*]" in w.windowTitle()
    path = tmp_path / "mine.json"
    assert w.save_to(str(path))
    assert not w.isWindowModified() and "mine.json" in w.windowTitle()
    saved = w.design.copy()
    w2 = open_window(qtbot)
    assert w2.open_file(str(path))
    assert w2.design == saved
    assert w2.design.topology.components["sw-1"].props["ports"] == 48
    assert str(path.resolve()) == w2.recent_files()[0]


def test_open_bad_file_shows_the_reason(qtbot, tmp_path, answers):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "dpu-cluster-design", "version": 1, "components": 3}')
    w = open_window(qtbot)
    before = w.design.copy()
    assert not w.open_file(str(bad))
    assert "bad.json" in answers["asked"][-1] and "components" in answers["asked"][-1]
    assert w.design == before


def test_close_asks_before_losing_work(qtbot, answers):
    w = open_window(qtbot)
    w.editor.delete(["sw-4"])
    answers["queue"] = [QMessageBox.Cancel]
    assert not w.close()
    assert answers["asked"] and w.isVisible()
    answers["queue"] = [QMessageBox.Discard]
    assert w.close()


CRASH = textwrap.dedent("""
    import os, sys
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from designer.gui.mainwindow import MainWindow
    from designer.topology import fileformat
    w = MainWindow(fileformat.load(sys.argv[1]), sys.argv[1])
    w.editor.set_fields(["sw-1"], "ports", 40)
    w.editor.delete(["sw-4"])
    w.autosave()
    os._exit(3)   # a crash: no clean-up
""")


def test_recovery_after_a_crash(qtbot, tmp_path, answers):
    design_file = tmp_path / "cluster.json"
    design_file.write_bytes(example_path().read_bytes())
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", CRASH, str(design_file)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert len(recovery.leftovers()) == 1

    answers["queue"] = [QMessageBox.Yes]
    w = open_window(qtbot)
    assert w.offer_recovery()
    assert "cluster.json" in answers["asked"][0]
    topo = w.design.topology
    assert topo.components["sw-1"].props["ports"] == 40 and "sw-4" not in topo.components
    assert w.path == str(design_file) and w.isWindowModified()
    assert recovery.leftovers() == []          # the crashed session's file is gone
    assert w.autosaver.file.is_file()          # and this session keeps the changes safe
    on_disk = fileformat.load(design_file)
    assert "sw-4" in on_disk.topology.components  # nothing was written to the design itself


def test_new_from_template_builds_the_generator_design(qtbot, monkeypatch, answers):
    from designer.gui.template_dialog import TemplateDialog

    def fake_exec(dialog):
        dialog.kind.setCurrentIndex(dialog.kind.findData("leaf-spine"))
        dialog.fields["leaf-spine"]["servers"].setValue(4)
        return TemplateDialog.Accepted

    monkeypatch.setattr(TemplateDialog, "exec", fake_exec)
    w = open_window(qtbot)
    w.new_from_template()
    assert len(w.design.topology.servers()) == 4
    assert w.scene.component_ids() == set(w.design.topology.components)
    assert w.path is None and not w.editor.stack.canUndo()


def _cli(*args):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "designer.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_screenshot_command_line(tmp_path):
    out = tmp_path / "shot.png"
    proc = _cli(str(example_path()), "--screenshot", str(out), "--size", "1200x800")
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 800)
    bad = tmp_path / "nope.json"
    proc = _cli(str(bad), "--screenshot", str(out))
    assert proc.returncode == 2
    assert "nope.json" in proc.stderr and "Traceback" not in proc.stderr


def test_a_failed_autosave_is_shown_and_tried_again(qtbot, answers, monkeypatch):
    w = open_window(qtbot)
    w.editor.set_fields(["sw-1"], "ports", 48)
    problems = ["disk full", None]
    writes = []

    def write(design, original):
        writes.append(design.topology.version)
        return problems.pop(0)

    monkeypatch.setattr(w.autosaver, "write", write)
    w.autosave()
    assert "Autosave failed: disk full" in w._status.text()
    w.autosave()  # nothing changed since, but nothing was kept either: tried again
    assert len(writes) == 2
    w.autosave()  # now written: nothing to do until the next change
    assert len(writes) == 2


def test_discard_from_the_timer_never_raises(qtbot, answers, monkeypatch):
    w = open_window(qtbot)

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(w.autosaver.file), "unlink", refuse)
    w.autosave()  # not modified: the recovery file is discarded
    w.autosaver.discard()


def test_scenario_editors_follow_the_spec_and_zero_means_no_checkpoints(qtbot, answers):
    from designer.topology.design import SCENARIO_SPEC

    w = open_window(qtbot)
    panel = w.scenario
    spin = panel.checkpoint
    assert (spin.minimum(), spin.maximum()) == (0, SCENARIO_SPEC["checkpoint_interval_s"].maximum)
    assert (panel.seed.minimum(), panel.seed.maximum()) == (0, 2**31 - 1)
    assert panel.tenants.minimum() == 1
    spin.setValue(0)
    assert w.design.scenario["checkpoint_interval_s"] == 0
    assert spin.text() == "no checkpoints"
    w.editor.stack.undo()
    assert w.design.scenario["checkpoint_interval_s"] == 3600.0
    qtbot.waitUntil(lambda: spin.text() != "no checkpoints", timeout=1000)


def test_every_scenario_setting_has_an_editor_that_edits_it_as_one_undo_step(qtbot, answers):
    from designer.topology.design import SCENARIO_SPEC

    w = open_window(qtbot)
    panel = w.scenario
    from PySide6.QtWidgets import QFormLayout, QGroupBox

    form = next(g for g in panel.findChildren(QGroupBox) if g.title() == "Scenario").layout()
    assert isinstance(form, QFormLayout)
    labels = [form.itemAt(i, QFormLayout.LabelRole).widget().text() for i in range(form.rowCount())]
    # one row per setting the user sets (per_server is edited per server, in the inspector)
    assert len(labels) == len([k for k in SCENARIO_SPEC if k != "per_server"])
    before = dict(w.design.scenario)
    panel.gds.click()
    assert w.design.scenario["gpudirect_storage"] is True
    box = panel.choices["storage_transport"]
    box.setCurrentIndex(box.findData("tcp"))
    box.activated.emit(box.currentIndex())
    assert w.design.scenario["storage_transport"] == "tcp"
    box = panel.choices["tenant_placement"]
    box.activated.emit(box.findData("scattered"))
    assert w.design.scenario["tenant_placement"] == "scattered"
    for _ in range(3):
        w.editor.stack.undo()
    assert w.design.scenario == before
    qtbot.waitUntil(lambda: not panel.gds.isChecked()
                    and panel.choices["storage_transport"].currentData() == "rdma", timeout=1000)
