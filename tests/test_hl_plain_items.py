"""The loader's columns (issue 20: one decoder): the decoded items' fields become columns, the
model's default where an item leaves a field out (``fileformat._columns``), and the text's
members are counted for a key given twice (``fileformat._text_members``). Whatever an item
holds, loading the text gives exactly what ``from_dict`` of json.loads' document gives: the same
design, or the same message. Also: the model's items hold only their fields (slots)."""

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
from test_load_speedpath import careful  # json.loads with the duplicate-key hook, then from_dict
from test_load_speedpath import loaded  # what ``loads`` gives (msgspec decoding the text)


DOC = json.loads(dumps(TEMPLATES["rail-optimized"](servers=8, su_size=4, dpu="bluefield-3")))


_ITEMS = fileformat.SCHEMA["properties"]
COMPONENT_KEYS = set(_ITEMS["components"]["items"]["properties"])
LINK_KEYS = set(_ITEMS["links"]["items"]["properties"])
_OPTIONAL_LINK_VALUES = {"lanes": st.sampled_from([1, 2, 1.0, 3.0]), "latency_us": st.sampled_from([0, 0.0, 1.5]),
                         "a_port": st.sampled_from([None, 0, 3]), "b_port": st.sampled_from([None, 2])}


# ----------------------------------------------------------------------------- _columns
@settings(max_examples=200, derandomize=True, deadline=None, database=None)
@given(st.lists(st.fixed_dictionaries(
    {"id": st.sampled_from(["l1", "l2", "x:y"]), "a": st.just("x"), "b": st.just("y"), "medium": st.just("pcie"),
     "speed_Gbps": st.sampled_from([1, 2.5, 400])}, optional=_OPTIONAL_LINK_VALUES), max_size=12))
def test_columns_are_each_field_with_the_models_default_where_left_out(items):
    # any mix of fields given and left out, given at their default value (0 == 0.0, 1 == 1.0)
    doc = {"format": fileformat.FORMAT, "version": 1, "name": "n", "components": [], "links": items}
    decoded = fileformat._DECODER.decode(json.dumps(doc).encode())
    comps, links, given, written = fileformat._columns(decoded)
    for key in LINK_KEYS:
        want = [item.get(key, fileformat._DEFAULTS.get(key)) for item in items]
        assert links[key] == want and list(map(type, links[key])) == list(map(type, want))
    assert given == sum(map(len, items))
    assert written == {f"links.{k}" for k in _OPTIONAL_LINK_VALUES if any(k in item for item in items)}
    assert fileformat._text_members(json.dumps(doc).encode()) == fileformat._decoded_members(decoded, given)


def test_a_column_no_item_gives_is_the_default_and_not_written():
    doc = {"format": fileformat.FORMAT, "version": 1, "name": "n", "components": [],
           "links": [{"id": "l1", "a": "x", "b": "y", "medium": "pcie", "speed_Gbps": 1, "lanes": 2},
                     {"id": "l2", "a": "y", "b": "x", "medium": "pcie", "speed_Gbps": 1}]}
    _, cols, given, written = fileformat._columns(fileformat._DECODER.decode(json.dumps(doc).encode()))
    assert written == {"links.lanes"} and given == 11
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
        if not isinstance(items[i], dict):  # (made no object by an earlier change)
            continue
        fields = sorted(COMPONENT_KEYS if key == "components" else LINK_KEYS)
        field = draw(st.sampled_from(fields))
        op = draw(st.sampled_from(["set", "set", "set", "default", "drop", "extra", "duplicate", "item"]))
        if op == "set":
            items[i][field] = copy.deepcopy(draw(st.sampled_from(VALUES)))
        elif op == "default":  # a key given with the value the model takes when it is left out
            defaults = fileformat._DEFAULTS
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
def test_any_item_change_in_a_text_gives_what_its_document_gives(text):
    assert loaded(text) == careful(text)


def test_values_left_at_their_default_load_the_same():
    # a file written by another tool may give every optional key, at its default value
    doc = copy.deepcopy(DOC)
    for c in doc["components"]:
        c.setdefault("name", "")
    for l in doc["links"]:
        l.update({"latency_us": l.get("latency_us", 0.0), "lanes": l.get("lanes", 1), "a_port": None, "b_port": None})
    text = json.dumps(doc)
    assert loaded(text) == careful(text) and loaded(text)[0] == "loaded"


@pytest.mark.parametrize("field,value", [("latency_us", "null"), ("lanes", "null"), ("parent", "null"),
                                         ("slot", "null"), ("pos", "null"), ("props", "null"), ("name", "null")])
def test_null_where_the_schema_wants_a_value_is_refused_with_its_message(field, value):
    doc = copy.deepcopy(DOC)
    items = doc["links"] if field in LINK_KEYS else doc["components"]
    marker = "NULL-MARKER-5c1d"
    items[3][field] = marker
    text = json.dumps(doc).replace(json.dumps(marker), value, 1)
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


@pytest.mark.parametrize("where", ["kind", "medium", "parent", "a", "b", "model", "id"])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_literals_in_string_fields_are_refused_as_in_the_document(where, value):
    # json.loads gives NaN as a marker string, msgspec refuses the text: no marker can pass for a
    # component named "NaN"
    doc = copy.deepcopy(DOC)
    doc["components"][0]["id"] = value  # a component with that very name
    items = doc["links"] if where in ("a", "b", "medium") else doc["components"]
    marker = "NF-MARKER-9e2b"
    items[5][where] = marker
    text = json.dumps(doc).replace(json.dumps(marker), value, 1)
    got = loaded(text)
    assert got[0] == "refused" and got == careful(text)


def test_a_design_loaded_from_text_equals_the_one_from_its_document_field_by_field():
    rng = random.Random(3)
    doc = copy.deepcopy(DOC)
    for c in rng.sample(doc["components"], 10):
        c["name"] = rng.choice(["a", "b:c", "x y", "é"])
    for l in rng.sample(doc["links"], 10):
        l.update(latency_us=rng.choice([0.5, 2, 0]), a_port=rng.choice([None, 3]), b_port=4)
    text = json.dumps(doc, ensure_ascii=False)
    plain = loads(text)
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


def _members_one_by_one(data: bytes) -> int:
    """The ':' outside strings, byte by byte: a quote after an odd run of backslashes is no
    string's end (in JSON a backslash stands only inside a string, where it escapes the next
    character)."""
    count, inside, run = 0, False, 0
    for b in data:
        if b == 34 and run % 2 == 0:
            inside = not inside
        elif b == 58 and not inside:
            count += 1
        run = run + 1 if b == 92 else 0
    return count


@pytest.mark.parametrize("alphabet", [b'ab:"{} ,', b'a:"\\ ,'])
def test_members_of_a_big_text_are_counted_exactly(alphabet):
    # numpy counts in 1 MiB pieces: the same count as one byte at a time, colons and quotes at
    # the edges of the pieces included, escaped quotes (runs of backslashes) too
    rng = random.Random(7)
    size = (1 << 21) + 12345
    data = bytearray(rng.choice(alphabet) for _ in range(5000)) * (size // 5000 + 1)
    for at in (0, (1 << 20) - 1, 1 << 20, (1 << 21) + 1, size - 1):
        data[at] = ord(":")
    data[(1 << 20) - 2:(1 << 20) + 1] = b'\\"'
    data = bytes(data[:size])
    assert fileformat._text_members(data) == _members_one_by_one(data) > 0
    assert fileformat._text_members(data[:1000]) == _members_one_by_one(data[:1000])


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
    design = fileformat.from_dict(fileformat._parse(text, "f.json"), "f.json")
    return [design.topology.components[sw["id"]].props[field] for sw in switches[:2]]


@pytest.mark.parametrize("field, words", [("latency_us", "must be a number"), ("lanes", "must be an integer"),
                                          ("a_port", "must be an integer or null")])
def test_a_value_that_does_not_compare_gets_its_message(field, words):
    # from_dict of a dict made in Python: a numpy array (== gives no bool) where a number goes
    numpy = pytest.importorskip("numpy")
    doc = copy.deepcopy(DOC)
    doc["links"][2][field] = numpy.array([1.0, 2.0])
    with pytest.raises(DesignFileError) as info:
        fileformat.from_dict(copy.deepcopy(doc), "f.json")
    assert str(info.value) == f"f.json: links[2].{field}: {words}"
