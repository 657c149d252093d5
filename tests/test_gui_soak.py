"""2,000 random edits with undo/redo through the editor (with the canvas following): the model stays
equal to a replay of the commands on the stack, and the canvas shows exactly the model's items."""

import random

import pytest
from PySide6.QtWidgets import QMessageBox

from designer.gui.commands import apply_event
from designer.gui.editor import RefusedEdit
from designer.gui.testing import open_window

EDITS = 2000


@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)


def _random_edit(rng, w):
    ed, topo = w.editor, w.design.topology
    comps = list(topo.components)
    op = rng.choice(["place", "place", "connect", "connect", "move", "delete", "field", "paste",
                     "attach", "layout_rare", "undo", "undo", "redo"])
    if op == "place":
        kind = rng.choice(["rack", "gpu_server", "dpu", "nic", "switch", "storage"])
        models = ed.catalog.ids({"gpu_server": "server"}.get(kind, kind))
        into = None
        if kind in ("dpu", "nic") and topo.servers() and rng.random() < 0.7:
            into = rng.choice(topo.servers()).id
        elif kind == "gpu_server" and topo.racks() and rng.random() < 0.5:
            into = rng.choice(topo.racks()).id
        ed.place(kind, rng.choice(models), (rng.uniform(-2000, 2000), rng.uniform(-2000, 2000)), into)
    elif op == "connect" and len(comps) > 1:
        ed.connect(*rng.sample(comps, 2))
    elif op == "move" and comps:
        ids = rng.sample(comps, min(len(comps), rng.randint(1, 3)))
        ed.move({i: (rng.uniform(-2000, 2000), rng.uniform(-2000, 2000)) for i in ids})
    elif op == "delete" and (comps or topo.links):
        pool = comps + list(topo.links)
        ed.delete(rng.sample(pool, min(len(pool), rng.randint(1, 2))))
    elif op == "field" and comps:
        cid = rng.choice(comps)
        kind = topo.components[cid].kind
        name, value = {"switch": ("ports", rng.randint(8, 128)), "gpu_server": ("gpu_count", rng.randint(1, 16)),
                       "rack": ("rack_units", rng.randint(20, 48)), "storage": ("capacity_TB", 100.0),
                       "dpu": ("arm_cores", rng.randint(8, 32)), "nic": ("ports", rng.randint(1, 4))}[kind]
        ed.set_fields([cid], name, value)
    elif op == "paste" and comps:
        ed.duplicate(rng.sample(comps, min(len(comps), 2)))
    elif op == "attach" and topo.servers():
        ports = [c.id for c in topo.components.values() if c.kind in ("dpu", "nic")]
        if ports:
            ed.attach(rng.choice(ports), rng.choice(topo.servers()).id)
    elif op == "layout_rare" and rng.random() < 0.05:
        ed.auto_layout()
    elif op == "undo":
        ed.stack.undo()
    elif op == "redo":
        ed.stack.redo()


def test_random_edits_match_a_replay_of_the_stack(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    start = w.design.copy()
    rng = random.Random(1234)
    refused = 0
    for step in range(EDITS):
        try:
            _random_edit(rng, w)
        except RefusedEdit:
            refused += 1
        if step % 250 == 0:
            assert set(w.scene.comp_items) == set(topo.components)
            assert set(w.scene.link_items) == set(topo.links)
    assert refused < EDITS / 2
    assert w.editor.stack.index() > 100

    # replaying the commands up to the stack's index on a copy of the start gives the same model
    replay = start.copy()
    for i in range(w.editor.stack.index()):
        for ev in w.editor.stack.command(i).events:
            apply_event(replay, ev, forward=True)
    assert replay.topology.snapshot() == topo.snapshot()

    final, index = topo.snapshot(), w.editor.stack.index()
    w.editor.stack.setIndex(0)
    assert topo.snapshot() == start.topology.snapshot()
    w.editor.stack.setIndex(index)
    assert topo.snapshot() == final
    assert set(w.scene.comp_items) == set(topo.components)
    assert set(w.scene.link_items) == set(topo.links)
