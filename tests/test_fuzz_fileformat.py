"""Fuzzing the design-file loader: a corpus of hand-made broken files (tests/data/bad/) and
hypothesis-made mutations of a valid file. Every bad file gives one clear, path-qualified
DesignFileError (CLI: exit 2, one line); nothing else ever escapes; what loads saves and loads again.

Default mode: fixed examples (``derandomize``), a few seconds. ``--run-slow``: many more examples.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from designer import cli
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.fileformat import DesignFileError, dumps, from_dict, load, loads, to_dict
from designer.topology.templates import fat_tree, leaf_spine, rail_optimized

DATA = Path(__file__).parent / "data"
BAD = DATA / "bad"
SAMPLE_TEXT = (DATA / "design_v1_sample.json").read_text(encoding="utf-8")
SAMPLE = json.loads(SAMPLE_TEXT)

FAST = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=5000, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])

#: every file of tests/data/bad -> (JSON path of the first problem, part of the message)
CORPUS = {
    "bigint_literal.json": ("", "not valid JSON: Exceeds the limit (4300 digits)"),
    "bool_as_number.json": ("links[0].speed_Gbps", "must be a number"),
    "components_not_list.json": ("components", "must be a list [...]"),
    "dangling_link.json": ("links[0].b", "names no component 'sw-9'"),
    "dangling_parent.json": ("components[1].parent", "names no component 'rack-9'"),
    "deep_nesting.json": ("meta" + "[0]" * 31, "nested more than 32 levels deep"),
    "dpu_in_rack.json": ("components[2].parent", "a DPU belongs in a GPU server, not in a Rack"),
    "duplicate_component_id.json": ("components[3].id", "duplicate id 'srv-1' (also components[1])"),
    "duplicate_key.json": ("components[3]", "the field 'id' is given twice"),
    "duplicate_link_id.json": ("links[1].id", "duplicate id 'link-1' (also links[0])"),
    "empty.json": ("", "the file is empty"),
    "far_position.json": ("components[1].pos[0]", "must be at most 1e+09"),
    "huge_gpu_count.json": ("components[1].props.gpu_count", "must be at most 72"),
    "huge_integer.json": ("components[1].slot", "the integer is too large"),
    "infinity_pos.json": ("components[1].pos[0]", "-Infinity is not allowed"),
    "link_id_equals_component_id.json": ("links[0].id", "duplicate id 'sw-1' (also components[3])"),
    "missing_model.json": ("components[1]", "missing field 'model'"),
    "nan_speed.json": ("links[0].speed_Gbps", "NaN is not allowed"),
    "negative_counter.json": ("id_counters.srv", "must be at least 0"),
    "negative_slot.json": ("components[1].slot", "must be at least 0"),
    "negative_speed.json": ("links[0].speed_Gbps", "must be at least 0.001 Gb/s"),
    "newer_version.json": ("", "written by a newer DPU Cluster Designer (format version 99"),
    "not_json.json": ("", "not valid JSON: Expecting value"),
    "other_format.json": ("format", "not a design file"),
    "overflow_number.json": ("components[1].props.host_memory_GB", "inf is not allowed"),
    "rack_cycle.json": ("components[0].parent", "placement loops: rack-1 -> srv-1 -> rack-1"),
    "rack_in_itself.json": ("components[4].parent", "placement loops: rack-2 -> rack-2"),
    "self_link.json": ("links[0].b", "joins 'dpu-1' to itself"),
    "top_level_list.json": ("", "the top level must be a JSON object"),
    "truncated.json": ("", "the file ends early (truncated?)"),
    "unknown_field.json": ("components[1]", "unknown field 'colour'"),
    "unknown_kind.json": ("components[3].kind", "must be one of rack, gpu_server"),
    "unknown_medium.json": ("links[0].medium", "must be one of nvlink, pcie, infiniband, ethernet"),
    "unpaired_surrogate.json": ("name", "holds an unpaired surrogate"),
    "utf16.json": ("", "not a text (UTF-8) file"),
    "wrong_type_prop.json": ("components[1].props.gpu_count", "must be an integer"),
    "wrong_type_speed.json": ("links[0].speed_Gbps", "must be a number"),
    "zero_tenants.json": ("scenario.tenants", "must be at least 1"),
}


# ------------------------------------------------------------------------------ hand-made corpus
def test_corpus_lists_every_file():
    assert sorted(p.name for p in BAD.iterdir()) == sorted(CORPUS)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_file_gives_a_path_qualified_error(name):
    path, fragment = CORPUS[name]
    with pytest.raises(DesignFileError) as info:
        load(BAD / name)
    message = str(info.value)
    assert message.startswith(str(BAD / name)) and fragment in message
    assert info.value.path == path
    if path:
        assert f": {path}: " in message


def test_corpus_through_the_cli_exits_2_with_one_line(capsys):
    for name in sorted(CORPUS):
        assert cli.main(["validate", str(BAD / name)]) == 2, name
        out, err = capsys.readouterr()
        assert err.startswith(f"error: {BAD / name}") and err.count("\n") == 1 and not out, name
        assert CORPUS[name][1] in err


def test_failed_loads_leave_the_open_design_intact():
    design = from_dict(copy.deepcopy(SAMPLE))
    before = to_dict(design)
    for name in sorted(CORPUS):
        with pytest.raises(DesignFileError):
            load(BAD / name)
    assert to_dict(design) == before and design.topology.new_id("link") == "link-6"


def test_v1_sample_stays_a_version_1_file():
    """tests/data/design_v1_sample.json is kept forever: every later format version must load it."""
    assert SAMPLE["version"] == 1
    assert len(from_dict(copy.deepcopy(SAMPLE)).topology.components) == 8


# ------------------------------------------------------------------------------ size limits
def test_300_MB_file_refused_by_its_size_before_reading(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # sparse: no 300 MB written to disk
        fh.truncate(300 * 2**20)

    def no_reading(*args, **kwargs):
        raise AssertionError("the loader opened a file that is too large")

    monkeypatch.setattr(fileformat, "open", no_reading, raising=False)
    with pytest.raises(DesignFileError, match=r"big\.json: the file is 300 MiB; this program reads design "
                                              r"files up to 256 MiB"):
        load(big)


def test_file_growing_after_stat_is_cut_off(tmp_path, monkeypatch):
    """The size check is repeated on what is read, so a file that grows (or lies) cannot get in."""
    path = tmp_path / "d.json"
    path.write_text(SAMPLE_TEXT)
    monkeypatch.setattr(fileformat, "MAX_FILE_BYTES", len(SAMPLE_TEXT) - 10)
    real_stat = os.stat
    monkeypatch.setattr(fileformat.os, "stat", lambda p, *a, **k: os.stat_result(
        (*real_stat(p)[:6], 0, *real_stat(p)[7:])))
    with pytest.raises(DesignFileError, match="the file is larger than 0 MiB"):
        load(path)


def test_devices_and_folders_are_refused(tmp_path):
    with pytest.raises(DesignFileError, match="is a folder"):
        load(tmp_path)
    if os.path.exists("/dev/zero"):
        with pytest.raises(DesignFileError, match="not a regular file"):
            load("/dev/zero")


def test_very_deep_nesting_does_not_exhaust_the_stack():
    text = SAMPLE_TEXT.replace('"meta": {', '"meta": {"deep": ' + "[" * 200_000 + "]" * 200_000 + ", ", 1)
    with pytest.raises(DesignFileError, match="nested more than 32 levels deep"):
        loads(text, "x.json")


# ---------------------------------------------------------------------------- hypothesis: values
_KEY = st.from_regex(r"[a-z_]{1,10}", fullmatch=True)
_IDS = sorted({c["id"] for c in SAMPLE["components"]} | {l["id"] for l in SAMPLE["links"]})
_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(-10, 100), st.integers(), st.integers(min_value=2**53 - 2, max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e12, 1e12),
    st.text(max_size=12), st.sampled_from(_IDS),
    st.sampled_from(["rack", "gpu_server", "dpu", "nic", "switch", "storage", "infiniband", "leaf", ""]),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # unpaired surrogates
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEY, inner, max_size=4)), max_leaves=12)


def _paths(node, path=()):
    """The path of every value in a JSON tree (the root first)."""
    yield path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield from _paths(value, path + (key,))


_PATHS = list(_paths(SAMPLE))
_MUTATION = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(_PATHS[1:]), _VALUES),
    st.tuples(st.just("delete"), st.sampled_from(_PATHS[1:]), st.none()),
    st.tuples(st.just("add"), st.sampled_from(_PATHS), st.tuples(_KEY, _VALUES)),
    st.tuples(st.just("repeat"), st.sampled_from(_PATHS[1:]), st.none()),
)


def _mutate(doc, mutation):
    """Apply one mutation where its path still exists; returns the document."""
    op, path, arg = mutation
    if op == "add":
        path = path + (arg[0],)
    parent = doc
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return doc
    last = path[-1]
    if not isinstance(parent, (dict, list)) or (isinstance(parent, list) and
                                                not (isinstance(last, int) and last < len(parent))):
        return doc
    if isinstance(parent, dict) and op != "add" and last not in parent:
        return doc
    if op in ("set", "add"):
        parent[last] = arg if op == "set" else arg[1]
    elif op == "delete":
        del parent[last]
    elif isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    return doc


_STEP = re.compile(r"\[(\d+)\]|\.?([a-z_A-Z0-9-]+)")


def _resolves(doc, path: str) -> bool:
    """The JSON path names a place in the document ("" is the file as a whole), or a missing field
    of an object that is there."""
    node, pos = doc, 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return False
        key = int(m.group(1)) if m.group(1) is not None else m.group(2)
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return m.end() == len(path) and isinstance(node, dict) and isinstance(key, str)
        pos = m.end()
    return True


_REFERENCE = jsonschema.Draft202012Validator(fileformat.SCHEMA)


def _check_mutated_document(mutations):
    doc = copy.deepcopy(SAMPLE)
    for mutation in mutations:
        doc = _mutate(doc, mutation)
    snapshot = copy.deepcopy(doc)
    if fileformat._check_tree(doc) == [] and isinstance(doc, dict) and doc.get("format") == fileformat.FORMAT \
            and type(doc.get("version")) is int:
        # the decoder made from the schema (msgspec types, field by field where it words a
        # problem) accepts exactly what jsonschema accepts of the published schema
        assert bool(fileformat._structure_problems(doc)) == (not _REFERENCE.is_valid(doc)), doc
    try:
        design = from_dict(doc, "fuzz.json")
    except DesignFileError as exc:
        event("refused")
        message = str(exc)
        assert message.startswith("fuzz.json: ") and exc.errors
        message.encode("utf-8")  # can always be printed
        assert _resolves(snapshot, exc.path), (exc.path, message)
        return
    event("loaded")
    again = loads(dumps(design), "again.json")
    assert again == design and to_dict(again) == to_dict(design)


def _check_mutated_text(cut: int, start: int, length: int, insert: str):
    text = SAMPLE_TEXT[:cut]
    text = text[:start] + insert + text[start + length:]
    try:
        design = loads(text, "fuzz.json")
    except DesignFileError as exc:
        event("refused")
        assert str(exc).startswith("fuzz.json") and exc.errors
        str(exc).encode("utf-8")
        return
    event("loaded")
    assert loads(dumps(design)) == design


_MUTATIONS = st.lists(_MUTATION, min_size=1, max_size=3)
_TEXT_EDITS = (st.just(len(SAMPLE_TEXT)) | st.integers(0, len(SAMPLE_TEXT)), st.integers(0, len(SAMPLE_TEXT)),
               st.integers(0, 40),
               st.text(alphabet='{}[]",:0123456789.eE-+ aNInfinity\\tnul', max_size=8))


def _modes(check, *strategies):
    """The same property twice: a short CI run and a long one for --run-slow."""
    return (FAST(given(*strategies)(check)),
            pytest.mark.slow(LONG(given(*strategies)(check))))


test_mutated_documents, test_mutated_documents_long = _modes(_check_mutated_document, _MUTATIONS)
test_mutated_text, test_mutated_text_long = _modes(_check_mutated_text, *_TEXT_EDITS)


# ---------------------------------------------------------- the item decoder vs. jsonschema
_NUMBERS = st.one_of(st.integers(-3, 3), st.integers(), st.floats(), st.sampled_from([0.0, 1.0, -0.0, 2.5, 1e9,
                                                                                       1e9 + 1, -1e9, True]))


def _near(schema):
    """Values close to what a field's schema allows: right type at the edges, or nearly right."""
    named = schema.get("type", [])
    named = [named] if isinstance(named, str) else named
    options = [_SCALARS]
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"] + [s.upper() for s in schema["enum"]] + [None]))
    if {"integer", "number"} & set(named):
        options.append(_NUMBERS)
    if "string" in named:
        options.append(st.text(min_size=0, max_size=3) | st.text(min_size=199, max_size=201))
    if "array" in named:
        options.append(st.lists(_NUMBERS, min_size=1, max_size=3))
    return st.one_of(*options)


def _item_strategy(kind: str):
    """A valid item of the sample with one or two fields set to near-valid values (where a
    hand-made check and jsonschema could disagree) or an unknown field added."""
    props = fileformat.SCHEMA["properties"][kind]["items"]["properties"]
    change = st.one_of(*[st.tuples(st.just(name), _near(schema)) for name, schema in props.items()],
                       st.tuples(st.just("extra"), _SCALARS))
    return st.builds(lambda item, changes: {**item, **dict(changes)}, st.sampled_from(SAMPLE[kind]),
                     st.lists(change, min_size=1, max_size=2))


_ITEM_REFERENCE = {kind: jsonschema.Draft202012Validator(fileformat.SCHEMA["properties"][kind]["items"])
                   for kind in ("components", "links")}


def _check_item_never_wrongly_accepted(kind, item):
    """The item decoder (msgspec types made from the schema, JSON Schema's integers) accepts an
    item exactly when jsonschema accepts it (values the tree check refuses, NaN say, aside)."""
    accepted = not fileformat._item_problems(kind, [item])
    event(f"decoder {'accepts' if accepted else 'refuses'}")
    if not fileformat._check_tree(item):
        assert accepted == _ITEM_REFERENCE[kind].is_valid(item), item


def _check_components(item):
    _check_item_never_wrongly_accepted("components", item)


def _check_links(item):
    _check_item_never_wrongly_accepted("links", item)


test_fast_component_check, test_fast_component_check_long = _modes(_check_components, _item_strategy("components"))
test_fast_link_check, test_fast_link_check_long = _modes(_check_links, _item_strategy("links"))


def test_the_decoder_accepts_the_items_of_real_designs():
    """Valid items decode with no problem found, and jsonschema agrees."""
    catalog = load_catalog()
    designs = [leaf_spine(servers=8, catalog=catalog), fat_tree(k=4, dpu="bluefield-3", catalog=catalog),
               rail_optimized(servers=8, dpu="bluefield-3", catalog=catalog), from_dict(copy.deepcopy(SAMPLE))]
    for design in designs:
        data = to_dict(design)
        for kind in fileformat._ITEM_LISTS:
            assert data[kind] and not fileformat._item_problems(kind, data[kind]), design.name
            assert _ITEM_REFERENCE[kind].is_valid(data[kind][0])


def test_many_bad_items_are_explained_up_to_a_limit():
    doc = copy.deepcopy(SAMPLE)
    doc["links"] = [{"id": f"l{i}"} for i in range(1000)]
    with pytest.raises(DesignFileError) as info:
        from_dict(doc, "x.json")
    explained = {p.split("]")[0] for p, _ in info.value.errors if p.startswith("links[")}
    assert len(explained) == fileformat._EXPLAINED_ITEMS
    assert ("links", f"{1000 - fileformat._EXPLAINED_ITEMS} more entries do not match the file format "
            "either") in info.value.errors


# ------------------------------------------------------------------------------ saving
def test_values_the_loader_refuses_are_refused_when_saving(tmp_path):
    design = from_dict(copy.deepcopy(SAMPLE))
    deep: list = [1]
    for _ in range(40):
        deep = [deep]
    for bad, fragment in [("\udc80", "unpaired surrogate"), (2**60, "integer is too large"),
                          ({1, 2}, "not JSON serializable"), (deep, "nested more than 32")]:
        design.meta = {"x": bad}
        with pytest.raises(DesignFileError, match=f"d.json: .*cannot be saved: .*{fragment}"):
            fileformat.save(design, tmp_path / "d.json")
    assert not list(tmp_path.iterdir())


def test_integral_floats_become_ints():
    doc = copy.deepcopy(SAMPLE)
    doc["components"][2]["props"]["gpu_count"] = 4.0
    doc["components"][2]["slot"] = 9.0
    doc["links"][3]["lanes"] = 2.0
    topo = from_dict(doc).topology
    assert type(topo.get("srv-2").props["gpu_count"]) is int and type(topo.get("srv-2").slot) is int
    assert type(topo.links["link-5"].lanes) is int


def test_saving_a_loaded_file_again_changes_no_byte(tmp_path):
    """Found by the SIGKILL test: the id counters came back in another order, so a file that was
    only opened and saved differed from the original."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    fileformat.save(rail_optimized(servers=8, dpu="bluefield-3", catalog=load_catalog()), first)
    fileformat.save(load(first), second)
    assert second.read_bytes() == first.read_bytes()
