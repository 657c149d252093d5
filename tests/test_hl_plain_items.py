"""The loader's plain path on parsed text (issue 15, session 5): its item columns are taken with
fewer passes (``fileformat._columns`` counts the optional keys without a pass of their own) and,
for a document that json.loads or orjson made, some columns are not looked over for their types
(``_fast_columns(parsed=True)``). Whatever an item holds, loading the text gives exactly what the
careful parse gives: the same design, or the same message. Also: the model's items hold only
their fields (slots)."""

from __future__ import annotations

import copy
import json
import random
from itertools import chain

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, dumps, loads
from designer.topology.model import Component, Link
from designer.topology.templates import TEMPLATES
from test_load_speedpath import careful as careful_parse  # the careful parse, then the checks
from test_load_speedpath import loaded  # what ``loads`` gives (the plain path first)
# every test twice: the plain path parsing with json.loads, and with orjson (autouse fixture)
from test_load_speedpath import parser  # noqa: F401


DOC = json.loads(dumps(TEMPLATES["rail-optimized"](servers=8, su_size=4, dpu="bluefield-3")))


def careful(text: str):
    """What the careful parse and the item-by-item checks give (no fast path at all)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fileformat, "_fast_items", lambda data, build=True: None)
        return careful_parse(text)


# ----------------------------------------------------------------------------- _columns
def _reference_columns(items, required, optional):
    """The columns and counts the way they were taken before: a pass per key, a ``__contains__``
    pass per optional key, a ``len`` pass for keys of neither kind."""
    try:
        cols = {k: [item[k] for item in items] for k in required}
    except KeyError:
        return None
    cols.update({k: [item.get(k, d) for item in items] for k, d in optional.items()})
    given = {k: sum(k in item for item in items) for k in optional}
    if sum(map(len, items)) != len(items) * len(required) + sum(given.values()):
        return None
    return cols, given


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(st.lists(st.dictionaries(
    st.sampled_from(["id", "a", "b", "lanes", "latency_us", "a_port", "colour"]),
    st.sampled_from([None, 0, 0.0, 1, 1.0, True, False, "", "x", 2.5, 3]), max_size=7), max_size=12))
def test_columns_and_counts_are_those_of_a_pass_per_key(items):
    # any mix: keys left out, keys given with their default value (0 == 0.0 == False, 1 == True),
    # null where the default is null, a key the schema does not know, a required key missing
    optional = {"lanes": 1, "latency_us": 0.0, "a_port": None}
    got = fileformat._columns(items, ("id", "a"), optional)
    want = _reference_columns(items, ("id", "a"), optional)
    assert got == want
    if got is not None:  # the same objects, not only equal ones (1 and True, 0 and 0.0 ...)
        for key in got[0]:
            assert all(map(lambda x, y: x is y, got[0][key], want[0][key]))


def test_a_column_no_item_gives_is_the_default_and_counted_zero():
    items = [{"id": "l1", "a": "x", "lanes": 2}, {"id": "l2", "a": "y"}]
    cols, given = fileformat._columns(items, ("id", "a"), {"lanes": 1, "latency_us": 0.0, "a_port": None})
    assert given == {"lanes": 1, "latency_us": 0, "a_port": 0}
    assert cols["lanes"] == [2, 1] and cols["latency_us"] == [0.0, 0.0] and cols["a_port"] == [None, None]


# ----------------------------------------------------------------- whole texts, item by item
#: values a field may be set to in a text: every JSON type, edge numbers and strings, the
#: default values, ids in use, kind and medium names
VALUES = [None, True, False, 0, 1, -1, 2, 2.0, 0.0, 2.5, -0.5, 1e300, 2**53, 2**53 + 1, "", "x", "x" * 201,
          "é", "a:b", "sw-1", "srv-1", "link-1", "rack-1", [], [1], [1, 2], [1.0, "a"], [1e10, 0], {},
          {"tier": "spine"}, {"gpu_count": 4}, {"nope": 1}, "gpu_server", "nic", "rack", "dpu", "switch",
          "storage", "infiniband", "ethernet", "pcie", ["nic"], {"kind": "nic"}]


@st.composite
def mutated_texts(draw):
    doc = copy.deepcopy(DOC)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(["components", "links"]))
        items = doc[key]
        i = draw(st.integers(0, len(items) - 1))
        fields = sorted(fileformat._COMPONENT_KEYS if key == "components" else fileformat._LINK_KEYS)
        field = draw(st.sampled_from(fields))
        op = draw(st.sampled_from(["set", "set", "set", "default", "drop", "extra", "duplicate", "item"]))
        if op == "set":
            items[i][field] = copy.deepcopy(draw(st.sampled_from(VALUES)))
        elif op == "default":  # a key given with the value the model takes when it is left out
            defaults = {**fileformat._COMPONENT_OPTIONAL, **fileformat._LINK_OPTIONAL}
            optional = [k for k in fields if k in defaults]
            name = draw(st.sampled_from(optional))
            items[i][name] = defaults[name]
        elif op == "drop":
            items[i].pop(field, None)
        elif op == "extra":
            items[i]["colour"] = "red"
        elif op == "duplicate":
            items.append(copy.deepcopy(items[i]))
        else:  # an item that is no object
            items[i] = draw(st.sampled_from([None, 1, "x", [], [items[i]]]))
    return json.dumps(doc, ensure_ascii=False)


@settings(max_examples=250, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_texts())
def test_any_item_change_in_a_text_gives_what_the_careful_parse_gives(text):
    assert loaded(text) == careful(text)


def test_values_left_at_their_default_load_plainly_and_the_same():
    # a file written by another tool may give every optional key, at its default value
    doc = copy.deepcopy(DOC)
    for c in doc["components"]:
        c.setdefault("name", "")
    for l in doc["links"]:
        l.update({"latency_us": l.get("latency_us", 0.0), "lanes": l.get("lanes", 1), "a_port": None, "b_port": None})
    text = json.dumps(doc)
    assert fileformat._plain_design(text) is not None
    assert loaded(text) == careful(text) and loaded(text)[0] == "loaded"


@pytest.mark.parametrize("field,value", [("latency_us", "null"), ("lanes", "null"), ("parent", "null"),
                                         ("slot", "null"), ("pos", "null"), ("props", "null"), ("name", "null")])
def test_null_where_the_schema_wants_a_value_is_refused_with_its_message(field, value):
    doc = copy.deepcopy(DOC)
    items = doc["links"] if field in fileformat._LINK_KEYS else doc["components"]
    marker = "NULL-MARKER-5c1d"
    items[3][field] = marker
    text = json.dumps(doc).replace(json.dumps(marker), value, 1)
    assert fileformat._plain_design(text) is None
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


@pytest.mark.parametrize("where", ["kind", "medium", "parent", "a", "b", "model", "id"])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_literals_in_string_fields_are_refused_as_the_careful_parse_does(where, value):
    # json.loads gives NaN as the careful parse's marker string; the plain path refuses the text
    # instead, so no marker can pass for a component named "NaN"
    doc = copy.deepcopy(DOC)
    doc["components"][0]["id"] = value  # a component with that very name
    items = doc["links"] if where in ("a", "b", "medium") else doc["components"]
    marker = "NF-MARKER-9e2b"
    items[5][where] = marker
    text = json.dumps(doc).replace(json.dumps(marker), value, 1)
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


def test_a_design_loaded_plainly_equals_the_careful_one_field_by_field():
    rng = random.Random(3)
    doc = copy.deepcopy(DOC)
    for c in rng.sample(doc["components"], 10):
        c["name"] = rng.choice(["a", "b:c", "x y"])  # (non-ASCII text goes the careful way)
    for l in rng.sample(doc["links"], 10):
        l.update(latency_us=rng.choice([0.5, 2, 0]), a_port=rng.choice([None, 3]), b_port=4)
    text = json.dumps(doc, ensure_ascii=False)
    plain = fileformat._plain_design(text)
    assert plain is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fileformat, "_fast_items", lambda data, build=True: None)
        want = fileformat.from_dict(fileformat._parse(text, "f.json"))
    a, b = plain.topology, want.topology
    assert list(a.components) == list(b.components) and list(a.links) == list(b.links)
    for x, y in chain(zip(a.components.values(), b.components.values()), zip(a.links.values(), b.links.values())):
        assert x == y and [type(getattr(x, f)) for f in x.__slots__] == [type(getattr(y, f)) for f in y.__slots__]
    assert all(c.props is not d.props for c, d in zip(a.components.values(), list(a.components.values())[1:]))


def test_items_hold_only_their_fields():
    # slots: a misspelt field is an error, not a new attribute the rest of the program ignores
    comp, link = Component("c", "rack", "r"), Link("l", "a", "b")
    with pytest.raises(AttributeError):
        comp.nmae = "x"
    with pytest.raises(AttributeError):
        link.speed = 100
    assert comp.copy() == comp and link.copy() == link


def test_colons_of_a_big_file_are_counted_exactly():
    # numpy counts the bytes of a big file in pieces (when the program has loaded it): the same
    # count as bytes.count, colons at the edges of the pieces included
    import numpy  # noqa: F401  (loaded, as the engine loads it)

    rng = random.Random(7)
    size = (1 << 22) + 12345
    data = bytearray(rng.choice(b'ab:"{} ,') for _ in range(5000)) * (size // 5000 + 1)
    for at in (0, (1 << 20) - 1, 1 << 20, (1 << 21) + 1, size - 1):
        data[at] = ord(":")
    data = bytes(data[:size])
    assert fileformat._colons(data) == data.count(b":") > 0
    assert fileformat._colons(data[:1000]) == data[:1000].count(b":")
    assert fileformat._colons(data.decode()) == data.count(b":")


@pytest.mark.parametrize("first,second", [("64", "true"), ("64", "64.0"), ("64.0", "64"), ("true", "1"),
                                          ("1", "true"), ("0.0", "-0.0"), ('"leaf"', '"x"')])
def test_props_objects_alike_but_for_a_type_are_each_checked_and_kept(first, second):
    # each distinct props object is checked once: 64, 64.0 and true are equal in Python but not
    # the same JSON value (an int field refuses true, turns 64.0 into 64)
    doc = copy.deepcopy(DOC)
    switches = [c for c in doc["components"] if c["kind"] == "switch"]
    field = "tier" if first.startswith('"') else "ports"
    for sw, value in ((switches[0], first), (switches[1], second)):
        sw["props"] = {field: f"VALUE-{value}"}
    text = json.dumps(doc)
    for value in (first, second):
        text = text.replace(json.dumps(f"VALUE-{value}"), value, 1)
    got = loaded(text)
    assert got == careful(text)
    if got[0] == "loaded":
        design = loads(text)
        kept = [design.topology.components[sw["id"]].props[field] for sw in switches[:2]]
        assert [type(v) for v in kept] == [type(v) for v in careful_props(text, switches, field)]
        assert [repr(v) for v in kept] == [repr(v) for v in careful_props(text, switches, field)]


def careful_props(text, switches, field):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fileformat, "_fast_items", lambda data, build=True: None)
        design = fileformat.from_dict(fileformat._parse(text, "f.json"), "f.json")
    return [design.topology.components[sw["id"]].props[field] for sw in switches[:2]]


@pytest.mark.parametrize("field", ["latency_us", "lanes", "a_port"])
def test_a_value_that_does_not_compare_gets_the_full_checks_message(field):
    # from_dict of a dict made in Python: a numpy array (== gives no bool) where a number goes
    numpy = pytest.importorskip("numpy")
    doc = copy.deepcopy(DOC)
    doc["links"][2][field] = numpy.array([1.0, 2.0])

    def outcome(fast: bool):
        with pytest.MonkeyPatch.context() as mp:
            if not fast:
                mp.setattr(fileformat, "_fast_items", lambda data, build=True: None)
            try:
                fileformat.from_dict(copy.deepcopy(doc), "f.json")
                return "loaded"
            except DesignFileError as exc:
                return str(exc)

    got = outcome(True)
    assert got == outcome(False) and got.startswith("f.json: links[2]")
