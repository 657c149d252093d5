"""2,000 random edits with undo/redo through the editor (with the canvas following): the model stays
equal to a replay of the commands on the stack, and the canvas shows exactly the model's items."""

import random

import pytest

from designer.gui.commands import apply_event
from designer.gui.editor import RefusedEdit
from designer.gui.testing import open_window, random_edit

EDITS = 2000


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def test_random_edits_match_a_replay_of_the_stack(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    start = w.design.copy()
    rng = random.Random(1234)
    refused = 0
    for step in range(EDITS):
        try:
            random_edit(rng, w)
        except RefusedEdit:
            refused += 1
        if step % 250 == 0:
            assert w.scene.component_ids() == set(topo.components)
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
    assert w.scene.component_ids() == set(topo.components)
    assert set(w.scene.link_items) == set(topo.links)
