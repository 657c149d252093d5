"""The loader's fast path (fileformat._fast_items, issue 15) accepts only what the full checks
accept and builds the same design: for valid files and for every kind of broken item, loading
with the fast path gives exactly what loading without it gives (the same Design, or the same
error message)."""

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
from designer.topology.fileformat import DesignFileError, from_dict, to_dict
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


def outcome(doc, fast: bool, monkeypatch):
    """What loading ``doc`` gives, with or without the fast path."""
    if not fast:
        monkeypatch.setattr(fileformat, "_fast_items", lambda data: None)
    try:
        design = from_dict(copy.deepcopy(doc), "f.json")
        return ("loaded", to_dict(design), design.topology.snapshot(), design.topology.counters)
    except DesignFileError as exc:
        return ("refused", str(exc), exc.path)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", sorted(DOCS))
def test_valid_files_take_the_fast_path_and_load_the_same(name, monkeypatch):
    doc = DOCS[name]
    assert fileformat._fast_items(copy.deepcopy(doc)) is not None
    fast, full = outcome(doc, True, monkeypatch), outcome(doc, False, monkeypatch)
    assert fast[0] == "loaded" and fast == full


#: values a field may be set to: every JSON type, edge numbers and strings, ids in use
VALUES = [None, True, False, 0, 1, -1, 2, 2.0, 2.5, -0.5, 1e300, 2**53, 2**53 + 1, 1e9 + 1, "", "x",
          "x" * 201, "é", "\ud800", "sw-1", "srv-1", "link-1", "rack-1", [], [1], [1, 2], [1.0, "a"],
          {}, {"tier": "spine"}, {"gpu_count": 4}, {"gpu_count": 400}, {"nope": 1}, "gpu_server",
          "nic", "rack", "dpu", "switch", "storage", "infiniband", "ethernet", "pcie", "nvlink",
          fileformat._NonFinite("NaN"), float("inf")]


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
        op = draw(st.sampled_from(["set", "set", "set", "drop", "extra", "duplicate", "dupkey"]))
        fields = sorted(fileformat._COMPONENT_KEYS if key == "components" else fileformat._LINK_KEYS)
        field = draw(st.sampled_from(fields))
        if op == "set":
            items[i][field] = draw(st.sampled_from(VALUES))
        elif op == "drop":
            items[i].pop(field, None)
        elif op == "extra":
            items[i]["colour"] = "red"
        elif op == "duplicate":
            items.append(copy.deepcopy(items[i]))
        else:
            marked = fileformat._DuplicateKeys(items[i])
            marked.twice = "id"
            items[i] = marked
    return doc


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutations())
def test_broken_items_give_what_the_full_checks_give(doc):
    with pytest.MonkeyPatch.context() as mp:
        fast = outcome(doc, True, mp)
        full = outcome(doc, False, mp)
    assert fast == full


def test_a_generated_design_is_not_checked_item_by_item(monkeypatch):
    # the fast path proves the items by columns; the per-item checks are never called
    doc = DOCS["rail"]
    for name in ("_schema_errors", "_semantic_errors", "_check_tree"):
        monkeypatch.setattr(fileformat, name, lambda data: pytest.fail(f"{name} called"))
    design = from_dict(copy.deepcopy(doc), "f.json")
    assert len(design.topology.links) == len(doc["links"])


def test_numbers_are_checked_by_type_and_range():
    assert fileformat._numbers_ok([1, 2.5, -3])
    assert not fileformat._numbers_ok([1, True])
    assert not fileformat._numbers_ok([1.0, math.nan])
    assert not fileformat._numbers_ok([2**53 + 1])
    assert fileformat._ints_ok([0, 5], 0) and not fileformat._ints_ok([1, -1], 0)
    assert not fileformat._ints_ok([1, 2.0])
    assert fileformat._id_text(["a", ""]) is None and fileformat._id_text(["a" * 201]) is None
    assert fileformat._id_text(["é"]) is None  # left to the full check (surrogates)
