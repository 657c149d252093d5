"""The file writer (``fileformat.dumps``, issue 20: one path, from the items' columns) writes exactly
the text of ``to_dict`` with json's encoder, one item a line, and refuses exactly what that text
would hold that the loader refuses (NaN, huge integers, broken strings, deep nesting) or what is
no JSON (numpy numbers, sets), with the same message: for plain designs and for designs holding
any odd value (bools and numpy numbers where numbers go, nested props, lists for positions)."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.paths import resources_dir
from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, dumps, to_dict
from designer.topology.model import replace_item
from designer.topology.templates import TEMPLATES


def dict_path(design) -> tuple[str, str]:
    """The reference: ``to_dict``, the loader's value checks over the whole document, then json's
    encoder item by item: ("text", ...) or ("refused", message)."""
    try:
        data = to_dict(design)
        errors = fileformat._check_tree(data)
        if errors:
            return ("refused", str(DesignFileError("<design>", [(p, f"cannot be saved: {m}") for p, m in errors])))
        encode = json.JSONEncoder(allow_nan=False, ensure_ascii=False).encode
        lines = ["{"] + [f" {json.dumps(k)}: {encode(v)}," for k, v in data.items() if k not in ("components", "links")]
        for key in ("components", "links"):
            body = ",\n  ".join(map(encode, data[key]))
            lines.append(f' "{key}": [\n  {body}\n ]' if body else f' "{key}": []')
        lines[-2] += ","
        return ("text", "\n".join(lines + ["}"]) + "\n")
    except (TypeError, ValueError) as exc:
        return ("refused", str(DesignFileError("<design>", [("", f"cannot be saved: {exc}")])))
    except (KeyError, IndexError) as exc:  # a pos the model never holds ("", {})
        return (type(exc).__name__, str(exc))


def written(design) -> tuple[str, str]:
    try:
        return ("text", dumps(design))
    except DesignFileError as exc:
        return ("refused", str(exc))
    except (KeyError, IndexError) as exc:
        return (type(exc).__name__, str(exc))


BASES = {
    "example": lambda: fileformat.load(resources_dir() / "examples" / "example.json"),
    "rail": lambda: TEMPLATES["rail-optimized"](servers=8, su_size=4, dpu="bluefield-3"),
    "leaf-spine": lambda: TEMPLATES["leaf-spine"](servers=6, oversubscription=2.0, storage="converged"),
}


@pytest.mark.parametrize("name", sorted(BASES))
def test_plain_designs_are_written_as_to_dict_with_jsons_encoder(name):
    design = BASES[name]()
    text = dumps(design)
    assert ("text", text) == dict_path(design)
    again = fileformat.loads(text)
    assert dumps(again) == text  # a loaded file saved again: the same bytes


#: values put in a component or link field
VALUES = [None, "", "x", "é\u2028", "\ud800", 0, -0.0, 1, 2, 2.0, 1.5, True, False, 2**53, 2**53 + 1,
          10**400, math.nan, math.inf, -math.inf, 1e300, np.int64(3), np.float64(2.5), [1, 2], (1.0, -0.0),
          (1, 2, 3), {"tier": "spine"}, {"note": "a\udc00"}, {"n": {"deep": [1, {"x": 2}]}}, {"n": math.nan},
          {"n": 10**30}, {1: "int key"}, {"s": {1, 2}}]
COMPONENT_FIELDS = ["name", "parent", "slot", "props", "pos", "model", "kind", "id"]
LINK_FIELDS = ["speed_Gbps", "latency_us", "lanes", "a_port", "b_port", "medium", "a", "id"]


@st.composite
def odd_designs(draw):
    design = BASES[draw(st.sampled_from(sorted(BASES)))]()
    topo = design.topology
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            item = draw(st.sampled_from(sorted(topo.components)))
            items, field = topo.components, draw(st.sampled_from(COMPONENT_FIELDS))
        else:
            item = draw(st.sampled_from(sorted(topo.links)))
            items, field = topo.links, draw(st.sampled_from(LINK_FIELDS))
        # set behind the model's back (items are immutable: a changed one put in the dict)
        items[item] = replace_item(items[item], **{field: copy.copy(draw(st.sampled_from(VALUES)))})
    return design


@settings(max_examples=250, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(odd_designs())
def test_any_value_gives_what_the_reference_gives(design):
    assert written(design) == dict_path(design)


@pytest.mark.parametrize("field,value", [("slot", True), ("slot", np.int64(1)), ("pos", (np.float64(1.0), 2.0)),
                                         ("name", 5), ("props", {"n": np.int64(1)}), ("props", {"n": math.nan})])
def test_values_that_are_not_plain_are_written_or_refused_as_json_would(field, value):
    design = BASES["rail"]()
    comps = design.topology.components
    cid = next(iter(comps))
    comps[cid] = replace_item(comps[cid], **{field: value})  # behind the model's back
    assert written(design) == dict_path(design)


@pytest.mark.parametrize("field,value", [("pos", [1.0, 2.0]), ("pos", (1, -0.0)), ("props", {"n": {"deep": [1]}}),
                                         ("props", {"n": None, "b": True, "s": "é"}), ("name", "x y")])
def test_unusual_but_sound_values_are_written(field, value):
    design = BASES["rail"]()
    comps = design.topology.components
    cid = next(iter(comps))
    comps[cid] = replace_item(comps[cid], **{field: value})  # behind the model's back
    assert written(design)[0] == "text" and written(design) == dict_path(design)


def test_links_with_every_optional_field():
    design = BASES["rail"]()
    links = design.topology.links
    ids = list(links)
    for lid, changes in zip(ids, [{"latency_us": 0.5}, {"lanes": 4}, {"a_port": 3, "b_port": None},
                                  {"latency_us": -0.0, "lanes": 1.0, "b_port": 7}]):  # -0.0, 1.0 left out
        links[lid] = replace_item(links[lid], **changes)
    assert written(design)[0] == "text" and written(design) == dict_path(design)
