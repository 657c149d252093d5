"""The model's edge (issues 20 and 23): items change only through the Topology, ids and names
without control characters or terminal escapes, no containment loop of any length, and undo back
to a saved state giving the saved bytes."""

from __future__ import annotations

import pytest

from designer.topology.model import (Component, Link, Topology, TopologyError, id_problem, name_problem,
                                     replace_item)


def _rack_pair() -> Topology:
    t = Topology()
    t.add_component(Component("rack-1", "rack", "rack-42u"))
    t.add_component(Component("rack-2", "rack", "rack-42u"))
    t.add_component(Component("srv-1", "gpu_server", "dgx-h100", parent="rack-1", slot=1))
    t.add_component(Component("nic-1", "nic", "connectx-7", parent="srv-1", slot=0))
    t.add_component(Component("sw-1", "switch", "qm9700"))
    t.add_link(Link("link-1", "nic-1", "sw-1"))
    return t


# -- changes only through the model -----------------------------------------------------------

@pytest.mark.parametrize("field,value", [("name", "x"), ("pos", (1.0, 2.0)), ("parent", "rack-2"),
                                         ("slot", 3), ("model", "dgx-b200"), ("props", {}), ("kind", "rack")])
def test_a_component_field_cannot_be_set_behind_the_models_back(field, value):
    t = _rack_pair()
    before = t.snapshot(), t.version
    with pytest.raises(AttributeError):
        setattr(t.components["srv-1"], field, value)
    assert (t.snapshot(), t.version) == before


@pytest.mark.parametrize("field,value", [("speed_Gbps", 100.0), ("lanes", 2), ("a", "sw-1"), ("medium", "ethernet")])
def test_a_link_field_cannot_be_set_behind_the_models_back(field, value):
    t = _rack_pair()
    with pytest.raises(AttributeError):
        setattr(t.links["link-1"], field, value)
    assert getattr(t.links["link-1"], field) != value


def test_an_update_puts_a_new_item_in_place_bumps_the_version_and_returns_the_old():
    t = _rack_pair()
    seen = []
    t.subscribe(seen.append)
    old_obj, v = t.components["srv-1"], t.version
    old = t.update_component("srv-1", name="first", pos=(1, 2))
    new = t.components["srv-1"]
    assert old is old_obj and old.name == "" and old.pos is None
    assert new is not old and (new.name, new.pos) == ("first", (1.0, 2.0)) and t.version == v + 1
    assert [(e.type, e.old.name, e.new.name) for e in seen] == [("component_changed", "", "first")]
    link = t.links["link-1"]
    assert t.update_link("link-1", speed_Gbps=200.0) is link and link.speed_Gbps == 400.0
    assert t.links["link-1"].speed_Gbps == 200.0 and t.version == v + 2
    # the props dict given is copied on the way in: changing the caller's dict changes nothing
    props = {"power_W": 5.0}
    t.update_component("srv-1", props=props)
    props["power_W"] = 99.0
    assert t.components["srv-1"].props == {"power_W": 5.0}


def test_move_many_sets_positions_as_updates_do():
    t, u = _rack_pair(), _rack_pair()
    t.move_many({"sw-1": (3, 4), "rack-2": None, "rack-1": (0.5, 1)})
    for cid, pos in {"sw-1": (3, 4), "rack-2": None, "rack-1": (0.5, 1)}.items():
        u.update_component(cid, pos=pos)
    assert t.snapshot() == u.snapshot() and t.components["sw-1"].pos == (3.0, 4.0)
    with pytest.raises(TopologyError, match="no component 'nope'"):
        t.move_many({"nope": (1, 1)})


def test_replace_item_is_for_items_outside_a_topology():
    c = Component("srv-9", "gpu_server", "dgx-h100")
    d = replace_item(c, parent="rack-1", slot=4)
    assert (c.parent, c.slot, d.parent, d.slot, d.id) == (None, None, "rack-1", 4, "srv-9")


# -- ids and names: no control characters, no terminal escapes -----------------------------------

HOSTILE = ["srv\x1b[31m-1", "a\nb", "tab\there", "nul\x00", "del\x7f", "csi\x9b2J", "bell\x07",
           "rtl\u202eevil", "line\u2028sep", "iso\u2066late"]


@pytest.mark.parametrize("ident", HOSTILE)
def test_an_id_with_a_control_character_is_refused_with_a_readable_message(ident):
    t = Topology()
    with pytest.raises(TopologyError) as err:
        t.add_component(Component(ident, "switch", "qm9700"))
    msg = str(err.value)
    bad = next(ch for ch in ident if not ch.isprintable() or ch in "\u202e\u2066")
    assert f"U+{ord(bad):04X}" in msg and "control character" in msg and "use letters" in msg
    assert msg.isprintable() and "\x1b" not in msg  # the message shows it escaped, never raw
    assert not t.components and t.version == 0
    t.add_component(Component("sw-1", "switch", "qm9700"))
    t.add_component(Component("sw-2", "switch", "qm9700"))
    with pytest.raises(TopologyError, match="link id .*control character"):
        t.add_link(Link(ident, "sw-1", "sw-2"))
    with pytest.raises(TopologyError, match="component id .*control character"):
        Topology.from_items([Component("ok", "rack", "r"), Component(ident, "rack", "r")], [])
    with pytest.raises(TopologyError, match="link id .*control character"):
        Topology.from_items([Component("sw-1", "switch", "x"), Component("sw-2", "switch", "x")],
                            [Link(ident, "sw-1", "sw-2")])


@pytest.mark.parametrize("ident", ["", None, 7])
def test_an_id_must_be_a_non_empty_string(ident):
    assert "non-empty string" in id_problem(ident)


@pytest.mark.parametrize("name", ["GPU server 1", "Rack A\tB", "é ü 中文 🚀", "x\u00a0y", ""])
def test_a_name_keeps_printable_text(name):
    t = Topology()
    t.add_component(Component("sw-1", "switch", "qm9700", name=name))
    t.update_component("sw-1", name=name + "!")
    assert name_problem(name) is None and t.components["sw-1"].name == name + "!"


@pytest.mark.parametrize("name", [n for n in HOSTILE if "\t" not in n])
def test_a_name_with_a_control_character_is_refused_everywhere_it_enters(name):
    t = Topology()
    with pytest.raises(TopologyError, match="name of 'sw-1'.*control character"):
        t.add_component(Component("sw-1", "switch", "qm9700", name=name))
    t.add_component(Component("sw-1", "switch", "qm9700", name="fine"))
    with pytest.raises(TopologyError, match="control character"):
        t.update_component("sw-1", name=name)
    assert t.components["sw-1"].name == "fine"
    with pytest.raises(TopologyError, match="name of 'sw-2'.*control character"):
        Topology.from_items([Component("sw-1", "switch", "x"), Component("sw-2", "switch", "x", name=name)], [])


def test_a_design_file_with_an_escape_in_an_id_is_refused_without_a_traceback(tmp_path, capsys):
    import json

    from designer.cli import main
    from designer.paths import resources_dir
    doc = json.loads((resources_dir() / "examples" / "example.json").read_text())
    old = doc["components"][0]["id"]
    doc["components"][0]["id"] = "\x1b]0;owned\x07" + old
    for c in doc["components"]:
        if c.get("parent") == old:
            c["parent"] = doc["components"][0]["id"]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(doc))
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and "\x1b" not in out + err and "\x07" not in out + err
    assert "U+001B" in err and "Traceback" not in err


# -- containment loops -----------------------------------------------------------------------

def test_two_racks_cannot_be_slotted_into_each_other():
    t = _rack_pair()
    t.update_component("rack-2", parent="rack-1")  # the model leaves kinds to the rules...
    with pytest.raises(TopologyError, match="'rack-1' cannot go into 'rack-2': 'rack-2' is inside 'rack-1'"):
        t.update_component("rack-1", parent="rack-2")  # ...but never a loop
    assert t.components["rack-1"].parent is None


def test_a_loop_of_any_length_is_refused_and_a_deep_chain_is_not():
    t = Topology()
    n = 2000
    for i in range(n):
        t.add_component(Component(f"r{i}", "rack", "rack-42u", parent=f"r{i - 1}" if i else None))
    with pytest.raises(TopologyError, match="'r0' cannot go into 'r1999'"):
        t.update_component("r0", parent=f"r{n - 1}")
    with pytest.raises(TopologyError, match="cannot contain itself"):
        t.update_component("r5", parent="r5")
    t.update_component("r0", parent=None)
    extra = Topology()
    extra.add_component(Component("b", "rack", "x", parent="a"))  # a parent not (yet) there
    with pytest.raises(TopologyError, match="'a' cannot go into 'b'"):
        extra.add_component(Component("a", "rack", "x", parent="b"))


def test_the_walk_up_ends_on_a_loop_already_in_the_model():
    """A loop put in behind the model's back (a loader that did not check) does not make the
    check spin: each component is visited once."""
    t = Topology.from_items([Component("a", "rack", "x", parent="b"), Component("b", "rack", "x", parent="a"),
                             Component("c", "rack", "x")], [])
    t.update_component("c", parent="a")  # c is not on the loop: accepted, and the walk ends
    with pytest.raises(TopologyError, match="'a' cannot go into 'c'"):
        t.update_component("a", parent="c")
