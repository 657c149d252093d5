"""The loader (issue 20: one decoder): a text decoded by msgspec (``loads``, ``load``) must load
to exactly what ``from_dict`` of the document json.loads makes of it loads, and every text that
json's duplicate-key hook finds a key given twice in (anywhere, hidden or not behind escapes and
colons) must be refused with the same message: msgspec keeps the last of two keys silently, so
the loader counts the text's members (``fileformat._text_members``) against the decoded ones. Also the lazily made indexes of a loaded topology
(``_links_of``, ``_children``, the id counters): the same contents as adding the items one by one."""

from __future__ import annotations

import copy
import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, dumps, loads, to_dict
from designer.topology.model import Component, Link, Topology
from designer.topology.templates import TEMPLATES


def _rail_text() -> str:
    return dumps(TEMPLATES["rail-optimized"](servers=8, su_size=4, dpu="bluefield-3"))


RAIL = _rail_text()


def careful(text: str):
    """What json.loads (object hook for duplicate keys) and ``from_dict`` give."""
    try:
        design = fileformat.from_dict(fileformat._parse(text, "f.json"), "f.json")
        return ("loaded", to_dict(design), design.topology.snapshot(), design.topology.counters)
    except DesignFileError as exc:
        return ("refused", str(exc), exc.path)


def loaded(text: str | bytes):
    """What ``loads`` gives (msgspec decoding the text)."""
    try:
        design = loads(text, "f.json")
        return ("loaded", to_dict(design), design.topology.snapshot(), design.topology.counters)
    except DesignFileError as exc:
        return ("refused", str(exc), exc.path)


def test_a_generated_design_loads_the_same_from_its_text_and_its_document():
    design = loads(RAIL)
    assert loaded(RAIL) == careful(RAIL) and loaded(RAIL)[0] == "loaded"
    assert to_dict(design) == json.loads(RAIL)


def _with_duplicate(text: str, anchor: str, key: str, value: str) -> str:
    """``text`` with ``"key": value,`` inserted after the first ``anchor``."""
    i = text.index(anchor) + len(anchor)
    return text[:i] + f'"{key}": {value}, ' + text[i:]


@pytest.mark.parametrize("anchor,key,value", [
    ('{"id": "srv-1", ', "id", '"srv-1"'),            # an item's id twice, same value
    ('{"id": "srv-1", ', "kind", '"gpu_server"'),     # another field twice, same value
    ('{"id": "link-1", ', "medium", '"ethernet"'),     # the later one wins silently in json
    ('"meta": {', "template", '"x:y:z"'),              # a dropped value holding colons
    ('"scenario": {', "seed", "0"),
    ('"props": {', "tier", '"leaf"'),
    ("{\n", "name", '"a: b"'),                         # the top level
])
def test_a_key_given_twice_is_refused_as_the_duplicate_key_hook_refuses_it(anchor, key, value):
    text = _with_duplicate(RAIL, anchor, key, value)
    got = loaded(text)
    assert got[0] == "refused" and "given twice" in got[1] and got == careful(text)


def test_colons_hidden_by_escapes_are_no_members():
    # a "\u003a" escape is a ':' that the text does not show (no member either way): with a
    # key given twice whose dropped value held a colon, the text still holds one member more
    text = _with_duplicate(RAIL, '"meta": {', "template", '"a:b"')
    text = text.replace('"name": "', '"name": "\\u003a', 1)
    assert loaded(text) == careful(text) and loaded(text)[0] == "refused"
    name_only = RAIL.replace('"name": "', '"name": "\\u003A', 1)  # valid: loads
    assert loaded(name_only) == careful(name_only) and loaded(name_only)[0] == "loaded"


def test_colons_inside_strings_are_told_from_pairs():
    doc = json.loads(RAIL)
    doc["name"] = "a:b::c"
    doc["meta"]["note"] = {"k:1": ["x:", {"y": ":"}], "z": 1.5}
    doc["components"][0]["name"] = "rack:1"
    doc["links"][0]["medium"] = "ethernet"
    text = json.dumps(doc, ensure_ascii=False)
    assert loaded(text) == careful(text) and loaded(text)[0] == "loaded"


def test_ids_holding_colons_are_counted_where_they_are_named():
    # a parent and link ends name component ids; their ':' count in the text too
    text = RAIL.replace('"sw-1"', '"sw:1"').replace('"rack-4"', '"rack::4"').replace('"srv-1"', '"s:r:v"')
    assert text.count('"sw:1"') > 2 and text.count('"rack::4"') > 2
    assert loaded(text) == careful(text) and loaded(text)[0] == "loaded"
    twice = _with_duplicate(text, '{"id": "link-1", ', "a", '"sw:1"')
    assert loaded(twice) == careful(twice) and loaded(twice)[0] == "refused"


def test_a_nan_literal_is_no_component_name():
    # json.loads reads NaN as a marker string "NaN": a link end NaN must not name a component "NaN"
    text = RAIL.replace('"sw-1"', '"NaN"').replace('"a": "NaN"', '"a": NaN', 1)
    assert '"a": NaN' in text
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


@pytest.mark.parametrize("big", ["1" + "0" * 400, "-" + "9" * 30, "1e400"])
@pytest.mark.parametrize("where", ["speed_Gbps", "latency_us", "lanes"])
def test_huge_numbers_in_links_are_refused_with_a_message(big, where):
    # 10**400 once reached math.isfinite in the fast check: an OverflowError traceback
    text = RAIL.replace('"speed_Gbps": 400', f'"{where}": {big}, "speed_Gbps": 400', 1) \
        if where != "speed_Gbps" else RAIL.replace('"speed_Gbps": 400', f'"speed_Gbps": {big}', 1)
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


def test_huge_integer_position_is_refused_with_a_message():
    text = re.sub(r'"pos": \[[^,]+,', '"pos": [1' + "0" * 400 + ",", RAIL, count=1)
    assert text != RAIL
    got = loaded(text)
    assert got[0] == "refused" and "integer is too large" in got[1] and got == careful(text)


@st.composite
def duplicated_texts(draw):
    """The rail design's text with one key of one object given a second time (any object: the
    top level, the head's settings, an item, a props object)."""
    doc = json.loads(RAIL)
    objects = [doc, doc["workload"], doc["scenario"], doc["meta"]] + doc["components"][:40] + doc["links"][:40]
    objects += [c["props"] for c in doc["components"] if c.get("props")][:5]
    target = draw(st.sampled_from([o for o in objects if o]))
    key = draw(st.sampled_from(sorted(target)))
    value = draw(st.sampled_from(['"a:b"', '":"', "1", "null", '{"c": ":"}', json.dumps(target[key])]))
    marker = "DUP-MARKER-7f3a"
    target[marker] = None
    text = json.dumps(doc, ensure_ascii=False)
    assert text.count(f'"{marker}": null') == 1
    return text.replace(f'"{marker}": null', f'"{key}": {value}', 1)


@settings(max_examples=60, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(duplicated_texts())
def test_any_key_given_twice_gives_what_the_duplicate_key_hook_gives(text):
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


# ------------------------------------------------------------------ lazily made indexes
def _one_by_one(components: list[Component], links: list[Link], counters: dict[str, int]) -> Topology:
    topo = Topology()
    for c in components:
        topo.add_component(c)
    for l in links:
        topo.add_link(l)
    topo.restore_counters(counters)
    return topo


def _items():
    comps = [Component("rack-3", "rack", "r"), Component("srv-7", "gpu_server", "s", parent="rack-3", slot=1),
             Component("nic-2", "nic", "n", parent="srv-7", slot=0), Component("nic-10", "nic", "n", parent="srv-7", slot=1),
             Component("sw-1", "switch", "w", parent="rack-3"), Component("x", "storage", "st")]
    links = [Link("link-4", "nic-2", "sw-1"), Link("link-9", "nic-10", "sw-1"), Link("cable-2-5", "sw-1", "x")]
    return comps, links


def _state(topo: Topology):
    return ({k: sorted(v) for k, v in topo._links_of.items()}, {k: sorted(v) for k, v in topo._children.items()},
            topo.counters)


def test_a_loaded_topology_has_the_indexes_and_counters_of_one_built_item_by_item():
    comps, links = _items()
    counters = {"srv": 3, "link": 20}
    lazy = Topology.from_items([c.copy() for c in comps], [l.copy() for l in links], counters)
    assert lazy._links_index is None and lazy._children_index is None and lazy._unnoted
    assert _state(lazy) == _state(_one_by_one(comps, links, counters))
    assert lazy.counters == {"srv": 7, "link": 20, "nic": 10, "rack": 3, "sw": 1, "cable-2": 5}


@pytest.mark.parametrize("edit", ["remove_component", "remove_link", "add_link", "update_link",
                                  "update_component", "new_id", "clear", "copy"])
def test_edits_before_the_indexes_are_made_keep_them_right(edit):
    comps, links = _items()
    lazy = Topology.from_items([c.copy() for c in comps], [l.copy() for l in links], {})
    eager = _one_by_one(comps, links, {})

    def apply(topo: Topology):
        if edit == "remove_component":
            return topo.remove_component("nic-10")
        if edit == "remove_link":
            return topo.remove_link("link-9")
        if edit == "add_link":
            return topo.add_link(Link("link-50", "nic-10", "x"))
        if edit == "update_link":
            return topo.update_link("link-4", b="x")
        if edit == "update_component":
            return topo.update_component("nic-2", parent=None, slot=None)
        if edit == "new_id":
            return topo.new_id("nic")
        if edit == "clear":
            return topo.clear()
        return topo.copy()

    got_lazy, got_eager = apply(lazy), apply(eager)
    assert got_lazy == got_eager  # what the edit returns (a Topology copy compares by content)
    if edit == "copy":
        lazy, eager = got_lazy, got_eager
    assert lazy == eager and _state(lazy) == _state(eager)
    assert lazy.new_id("nic") == eager.new_id("nic") and lazy.new_id("link") == eager.new_id("link")


def test_a_removed_items_number_is_never_handed_out_again():
    comps, links = _items()
    lazy = Topology.from_items([c.copy() for c in comps], [l.copy() for l in links], {})
    lazy.remove_component("nic-10")  # before the counters were first read
    assert lazy.new_id("nic") == "nic-11"


def test_a_loaded_file_knows_its_links_and_children():
    design = loads(RAIL)
    topo = design.topology
    fresh = _one_by_one(list(topo.components.values()), list(topo.links.values()), {})
    server = topo.servers()[0].id
    assert topo.links_of(server) == fresh.links_of(server)
    assert [c.id for c in topo.attached(server)] == [c.id for c in fresh.attached(server)]
    assert _state(topo)[:2] == _state(fresh)[:2]
    assert topo.counters == {**fresh.counters, **json.loads(RAIL)["id_counters"]}


def test_random_ids_count_as_one_by_one():
    rng = random.Random(5)
    names = ["a", "a-", "b--", "", "x-1-", "sw", "link"]
    comps = []
    for i in range(300):
        ident = f"{rng.choice(names)}{rng.choice(['', '-', '--'])}{rng.randint(0, 10**rng.randint(0, 25))}"
        if rng.random() < 0.1:
            ident = rng.choice(["é-5", "x 7", "١٢", "n-٣", "plain"]) + str(i)
        if ident in {c.id for c in comps}:
            continue
        comps.append(Component(ident, "rack", "r"))
    lazy = Topology.from_items(copy.deepcopy(comps), [], {})
    assert lazy.counters == _one_by_one(comps, [], {}).counters


@pytest.mark.parametrize("where,big", [
    ("speed", "123456789012345678901234567890"), ("speed", "-18446744073709551617"),
    ("meta", "123456789012345678901234567890"), ("meta", "1e30"), ("props", "123456789012345678901234567890"),
    ("counter", "123456789012345678901234567890")])
def test_integers_beyond_64_bits_are_kept_exact(where, big):
    # msgspec keeps such an integer exact (and the loader refuses it as too large), as json
    # does; a float literal that big loads
    doc = json.loads(RAIL)
    marker = "BIG-MARKER-7f3a"
    if where == "speed":
        doc["links"][0]["speed_Gbps"] = marker
    elif where == "meta":
        doc["meta"]["big"] = marker
    elif where == "props":
        next(c for c in doc["components"] if c.get("props"))["props"]["ports"] = marker
    else:
        doc["id_counters"]["srv"] = marker
    text = json.dumps(doc).replace(json.dumps(marker), big, 1)
    got = loaded(text)
    assert got == careful(text)
    if "e" not in big:
        assert got[0] == "refused" and ("too large" in got[1] or "must be" in got[1])
    assert loaded(text.encode("utf-8")) == got


def test_load_reads_a_file_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + RAIL.encode("utf-8"))
    assert to_dict(fileformat.load(path)) == json.loads(RAIL)


def test_noted_counters_skip_reading_the_ids_and_give_the_same_counters():
    # a builder that numbered its ids from its counters says so; the counters are the same as
    # those read from the ids
    comps, links = _items()
    counters = {"rack": 3, "srv": 7, "nic": 10, "sw": 1, "link": 9, "cable-2": 5}
    noted = Topology.from_items([c.copy() for c in comps], [l.copy() for l in links], counters, noted=True)
    assert not noted._unnoted
    read = Topology.from_items([c.copy() for c in comps], [l.copy() for l in links], counters)
    assert noted.counters == read.counters == counters
    assert noted.new_id("nic") == read.new_id("nic") == "nic-11"
