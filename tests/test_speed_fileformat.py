"""The loader's one path (issue 20) from its two doors: ``from_dict`` of a document and ``loads``
of its JSON text give exactly the same (the same Design, or the same error message), for valid
files and for every kind of broken item; a valid file's items are checked by columns, never
item by item."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.paths import resources_dir
from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, from_dict, loads, to_dict
from designer.topology.templates import TEMPLATES

DATA = Path(__file__).parent / "data"


def _documents() -> dict[str, dict]:
    docs = {"sample": json.loads((DATA / "design_v1_sample.json").read_text(encoding="utf-8")),
            "example": json.loads((resources_dir() / "examples" / "example.json").read_text(encoding="utf-8"))}
    for name, opts in (("rail", dict(servers=8, su_size=4, dpu="bluefield-3")),
                       ("leaf-spine", dict(servers=6, oversubscription=2.0, storage="converged"))):
        docs[name] = to_dict(TEMPLATES["rail-optimized" if name == "rail" else name](**opts))
    return docs


DOCS = _documents()


def outcome(doc, text: bool):
    """What loading ``doc`` gives, from the document itself or from its JSON text."""
    try:
        design = loads(json.dumps(doc), "f.json") if text else from_dict(copy.deepcopy(doc), "f.json")
        return ("loaded", to_dict(design), design.topology.snapshot(), design.topology.counters)
    except DesignFileError as exc:
        return ("refused", str(exc), exc.path)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_valid_files_load_the_same_from_their_document_and_their_text(name):
    doc = DOCS[name]
    got = outcome(doc, False)
    assert got[0] == "loaded" and got == outcome(doc, True)


#: values a field may be set to: every JSON type, edge numbers and strings, ids in use
VALUES = [None, True, False, 0, 1, -1, 2, 2.0, 2.5, -0.5, 1e300, 2**53, 2**53 + 1, 1e9 + 1, "", "x",
          "x" * 201, "é", "\ud800", "sw-1", "srv-1", "link-1", "rack-1", [], [1], [1, 2], [1.0, "a"],
          {}, {"tier": "spine"}, {"gpu_count": 4}, {"gpu_count": 400}, {"nope": 1}, "gpu_server",
          "nic", "rack", "dpu", "switch", "storage", "infiniband", "ethernet", "pcie", "nvlink",
          float("nan"), float("inf")]


@st.composite
def mutations(draw):
    name = draw(st.sampled_from(sorted(DOCS)))
    doc = copy.deepcopy(DOCS[name])
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(["components", "links"]))
        items = doc[key]
        if not items:
            continue
        i = draw(st.integers(0, len(items) - 1))
        op = draw(st.sampled_from(["set", "set", "set", "drop", "extra", "duplicate"]))
        fields = sorted(fileformat.SCHEMA["properties"][key]["items"]["properties"])
        field = draw(st.sampled_from(fields))
        if op == "set":
            items[i][field] = draw(st.sampled_from(VALUES))
        elif op == "drop":
            items[i].pop(field, None)
        elif op == "extra":
            items[i]["colour"] = "red"
        else:
            items.append(copy.deepcopy(items[i]))
    return doc


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutations())
def test_broken_items_give_the_same_from_the_document_and_its_text(doc):
    # (a float NaN of a document is named as Python spells it, the text's literal as JSON does)
    got = outcome(doc, False)
    if got[0] == "refused":
        spelt = got[1].replace("-inf is", "-Infinity is").replace(" inf is", " Infinity is")
        got = ("refused", spelt.replace("nan is", "NaN is"), got[2])
    assert got == outcome(doc, True)


def test_a_generated_design_is_not_checked_item_by_item(monkeypatch):
    # the columns prove the items; the field-by-field wording and the tree walk of the items
    # are never called (the head, small, is walked)
    doc = DOCS["rail"]
    for name in ("_structure_problems", "_item_problems", "_loops", "_parse"):
        monkeypatch.setattr(fileformat, name, lambda *a, name=name: pytest.fail(f"{name} called"))
    walk = fileformat._check_tree
    monkeypatch.setattr(fileformat, "_check_tree", lambda data, where=(): (
        pytest.fail("items walked") if "components" in data else walk(data, where)))
    for design in (from_dict(copy.deepcopy(doc), "f.json"), loads(json.dumps(doc), "f.json")):
        assert len(design.topology.links) == len(doc["links"])


def test_numbers_and_strings_are_checked_by_columns():
    assert fileformat._sound_numbers([1, 2.5, -3]) and fileformat._sound_numbers([])
    assert not fileformat._sound_numbers([1.0, math.nan]) and not fileformat._sound_numbers([math.inf])
    assert not fileformat._sound_numbers([2**53 + 1]) and not fileformat._sound_numbers([1.5, -(2**53) - 1])
    assert fileformat._sound_numbers([1e308, 1e308])  # a finite column whose sum overflows
    assert fileformat._within_max_int([2**53, 1e300]) and not fileformat._within_max_int([2**53 + 1, 0.5])
    assert fileformat._sound_strings(["a", "é", ""]) and not fileformat._sound_strings(["a", "\ud800"])
