"""Undo back to clean gives the saved bytes (issue 23): a removed component or link comes back
where it stood in the model's order and the id counters go back to what the file held."""

from __future__ import annotations

import pytest

from designer.gui.commands import push
from designer.gui.editor import Editor
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()


def _edits(ed: Editor) -> None:
    """A session of edits: every kind that adds, removes or changes items and counters."""
    topo = ed.topo
    servers = [c.id for c in topo.servers()]
    switch = next(c.id for c in topo.components.values() if c.kind == "switch")
    racks = [c.id for c in topo.racks()]
    new_sw = ed.place("switch", "qm9700", (4000.0, 100.0))
    other_sw = ed.place("switch", "qm9700", (4400.0, 100.0))
    ed.connect(other_sw, new_sw)
    ed.move({switch: (123.0, 456.0), new_sw: (10.0, 10.0)})
    ed.set_fields([servers[0]], "name", "first server")
    ed.delete([servers[1]])  # from the middle: the server, its adapters and their links
    ed.delete([next(iter(topo.links))])  # the first link
    ed.duplicate([servers[2]])
    ed.delete([racks[0]])  # the members stay, out of the rack
    push(ed.stack, ed.design, "counters only", lambda d: d.topology.new_id("link"))


def test_undo_all_gives_the_saved_bytes_and_redo_all_the_edited_ones(qapp):
    design = rail_optimized(servers=4, catalog=CAT)
    saved = fileformat.dumps(design)
    design = fileformat.loads(saved)  # as the window has it: opened from the file
    ed = Editor(design, CAT)
    ed.stack.setClean()
    _edits(ed)
    edited = fileformat.dumps(design)
    assert edited != saved and ed.stack.count() >= 8
    while ed.stack.canUndo():
        ed.stack.undo()
    assert ed.stack.isClean()
    assert fileformat.dumps(design) == saved
    while ed.stack.canRedo():
        ed.stack.redo()
    assert fileformat.dumps(design) == edited
    while ed.stack.canUndo():
        ed.stack.undo()
    assert fileformat.dumps(design) == saved


def test_undo_of_a_step_puts_each_removed_item_back_in_its_place(qapp):
    design = rail_optimized(servers=3, catalog=CAT)
    ed = Editor(design, CAT)
    topo = design.topology
    order, counters = topo.order(), topo.counters
    middle = topo.servers()[1].id
    links = [l for l in topo.links][::5]
    ed.delete([middle, *links])
    assert middle not in topo.components and topo.order() != order
    ed.stack.undo()
    assert topo.order() == order and topo.counters == counters
    ed.place("switch", "qm9700", (0.0, 0.0))
    assert topo.counters != counters
    ed.stack.undo()
    assert topo.counters == counters


def test_a_failed_action_leaves_order_and_counters_as_they_were(qapp):
    design = rail_optimized(servers=2, catalog=CAT)
    ed = Editor(design, CAT)
    topo = design.topology
    order, counters, before = topo.order(), topo.counters, fileformat.dumps(design)
    first = topo.servers()[0].id

    def action(d):
        d.topology.remove_component(first)
        d.topology.new_id("switch")
        raise RuntimeError("half way")

    with pytest.raises(RuntimeError):
        push(ed.stack, design, "broken", action)
    assert topo.order() == order and topo.counters == counters and fileformat.dumps(design) == before
