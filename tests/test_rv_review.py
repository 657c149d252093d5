"""Review of today's main as a cluster planner uses it (h9/rv): one number per fact across the
CLI, the app and the report, and hostile input. One test per finding, each failing before its fix."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMessageBox
import pytest

from designer.cli import main
from designer.gui.testing import open_window
from designer.topology import fileformat
from designer.topology.management import management_ids, switches_text
from designer.topology.templates import rail_optimized


@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)


def test_management_switches_counted_apart_in_the_app_as_new_counts_them(qtbot, tmp_path, capsys):
    """`new` said '123 switches + 76 management switches', the app's status bar and design summary
    '199 switches' for the same design: one count, one way of saying it."""
    design = rail_optimized(servers=16, management="oob")
    topo = design.topology
    mgmt = len(management_ids(topo))
    assert mgmt > 0
    fabric = len(topo.switches()) - mgmt
    text = switches_text(topo)
    assert text == f"{fabric:,} switches + {mgmt:,} management switch{'es' if mgmt != 1 else ''}"
    w = open_window(qtbot, design)
    assert text in w._counts.text()
    hint = " ".join(l.text() for l in w.inspector.findChildren(QLabel))
    assert text in hint and f"{len(topo.switches())} switches" not in hint
    path = tmp_path / "d.json"
    fileformat.save(design, path)
    main(["validate", str(path)])
    assert text in capsys.readouterr().out


def test_counts_have_thousands_separators():
    class Topo:  # 1,168 fabric and 608 management switches, as the 2,048-server rail design has
        def __init__(self):
            sw = type("C", (), {"kind": "switch"})
            self.components = {}
            for i in range(1776):
                c = sw()
                c.id, c.props = f"s{i}", ({"management": True} if i < 608 else {})
                self.components[c.id] = c

        def switches(self):
            return list(self.components.values())

    assert switches_text(Topo()) == "1,168 switches + 608 management switches"
