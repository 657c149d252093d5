"""Design files: JSON that holds the topology, canvas positions, workload and scenario (no Qt).

Layout of a file (format version 1)::

    {"format": "dpu-cluster-design", "version": 1, "name": "...",
     "components": [{"id", "kind", "model", "name"?, "parent"?, "slot"?, "props"?, "pos"?}, ...],
     "links": [{"id", "a", "b", "medium", "speed_Gbps", "latency_us"?, "lanes"?, "a_port"?,
                "b_port"?}, ...],
     "workload": {...}, "scenario": {...}, "meta": {...}, "id_counters": {"srv": 12, ...}}

Optional keys are left out when they hold their default, so ``to_dict(from_dict(d)) == d`` for every
saved file. Loading checks the structure against :data:`SCHEMA` (jsonschema for the top level; each
component and link with a check compiled from the same schema, jsonschema explaining the items that
fail it), then the meaning (kinds, field values, link ends, duplicate ids, parents) and reports the
first few problems with their JSON path. Nothing in a file is ever executed: it is read with
:mod:`json` only.

Limits (a file beyond them is refused with a message): :data:`MAX_FILE_BYTES` (256 MiB),
:data:`MAX_COMPONENTS` components, :data:`MAX_LINKS` links, :data:`MAX_DEPTH` levels of nesting,
integers up to ±:data:`MAX_INT`. NaN and Infinity are not JSON and are refused, and so are a key given
twice in one object and strings that are not valid Unicode.

Older format versions are brought up to date by :data:`MIGRATIONS` (version n -> n+1) on load.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import gc
import json
import math
import operator
import os
import stat
import sys
import tempfile
from itertools import chain, repeat
from operator import attrgetter, is_not, itemgetter
from pathlib import Path
from typing import Any, Callable, Iterator

try:  # the same JSON parsed faster (~0.3 s of a 131k-GPU design's 1 s), when installed
    import orjson
except ImportError:  # the standard library reads the same files (see _plain_design)
    orjson = None

from designer.errors import UsageError
from designer.safeio import _fsync_folder  # the one rename-durability step
from designer.topology.design import SCENARIO_SPEC, Design, number_text
from designer.topology.kinds import FIELDS, KINDS, LINK_FIELDS, MEDIA
from designer.topology.model import Component, Link, Topology, parent_problem
from designer.topology.workload_spec import json_schema_properties

FORMAT = "dpu-cluster-design"
VERSION = 1

#: a 250,000-component rail design with its ~500,000 cables is ~81 MiB; the link limit ~160 MiB
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_COMPONENTS = 250_000
MAX_LINKS = 1_000_000
MAX_DEPTH = 32
#: largest integer magnitude a file may hold (2^53: the integers every JSON reader keeps exactly)
MAX_INT = 2**53
#: largest canvas coordinate (scene units; a 16,384-GPU design spans about 10^5)
MAX_COORD = 1e9
#: how many problems a load error lists before "and N more"
SHOWN_ERRORS = 3

#: version n -> function turning a version-n dict into a version n+1 dict
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

_ID = {"type": "string", "minLength": 1, "maxLength": 200}
_NUMBER = {"type": "number"}
_COORD = {"type": "number", "minimum": -MAX_COORD, "maximum": MAX_COORD}
_OPT_INT = {"type": ["integer", "null"]}
#: the value checks of the workload fields a file may set (those of ``engine.workload.Workload``,
#: described in ``workload_spec`` so that the file format does not import the engine; other keys,
#: such as a catalog entry's sources, pass): type, precision name, no negative number. The engine
#: checks the ranges that depend on the design (tp x pp fits the GPUs ...) when it runs.
_WORKLOAD_PROPERTIES: dict[str, Any] = json_schema_properties()

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format", "version", "name", "components", "links"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "version": {"type": "integer"},
        "name": {"type": "string"},
        "components": {
            "type": "array",
            "maxItems": MAX_COMPONENTS,
            "items": {
                "type": "object",
                "required": ["id", "kind", "model"],
                "additionalProperties": False,
                "properties": {
                    "id": _ID,
                    "kind": {"enum": list(KINDS)},
                    "model": {"type": "string"},
                    "name": {"type": "string"},
                    "parent": _ID,
                    "slot": {"type": "integer", "minimum": 0},
                    "props": {"type": "object"},
                    "pos": {"type": "array", "items": _COORD, "minItems": 2, "maxItems": 2},
                },
            },
        },
        "links": {
            "type": "array",
            "maxItems": MAX_LINKS,
            "items": {
                "type": "object",
                "required": ["id", "a", "b", "medium", "speed_Gbps"],
                "additionalProperties": False,
                "properties": {
                    "id": _ID,
                    "a": _ID,
                    "b": _ID,
                    "medium": {"enum": list(MEDIA)},
                    "speed_Gbps": _NUMBER,
                    "latency_us": _NUMBER,
                    "lanes": {"type": "integer"},
                    "a_port": _OPT_INT,
                    "b_port": _OPT_INT,
                },
            },
        },
        "workload": {"type": "object", "properties": _WORKLOAD_PROPERTIES},
        "scenario": {"type": "object",
                     "properties": {name: spec.json_schema() for name, spec in SCENARIO_SPEC.items()}},
        "meta": {"type": "object"},
        "id_counters": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    },
}

#: the two long lists, whose items are checked one by one (see :func:`_schema_errors`)
_ITEM_LISTS = ("components", "links")
#: how many failing items are explained in full; the rest are only counted
_EXPLAINED_ITEMS = 20
_FIELD_SPECS = {kind: {s.name: s for s in specs} for kind, specs in FIELDS.items()}
_LINK_SPECS = {s.name: s for s in LINK_FIELDS}


# ------------------------------------------------------------------------- fast schema check
_PY_TYPES = {"integer": (int,), "number": (int, float), "string": (str,), "object": (dict,),
             "array": (list,), "boolean": (bool,), "null": (type(None),)}
_ANY_TYPE = tuple({t for types in _PY_TYPES.values() for t in types})
_KEYWORDS = {"type", "enum", "const", "minLength", "maxLength", "minimum", "exclusiveMinimum", "maximum",
             "minItems", "maxItems", "items", "required", "properties", "additionalProperties"}


def _compile(schema: dict[str, Any]) -> Callable[[Any], bool]:
    """A fast yes/no check for the part of JSON Schema that the item schemas use.

    It may refuse a value that jsonschema accepts (``1.0`` as an integer, say): such an item is then
    checked again by jsonschema, which has the last word and writes the message. It never accepts a
    value that jsonschema refuses. As in JSON Schema, a keyword applies only to values of its type
    (``minLength`` to strings...). A keyword it does not know fails here, when the module loads.
    """
    unknown = set(schema) - _KEYWORDS
    if unknown:
        raise ValueError(f"_compile: schema keywords {sorted(unknown)} are not supported")
    named = schema.get("type")
    types = _ANY_TYPE if named is None else tuple(
        t for name in ([named] if isinstance(named, str) else named) for t in _PY_TYPES[name])
    values = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
    allowed = None if values is None else {(type(v), v) for v in values}
    min_len, max_len = schema.get("minLength", 0), schema.get("maxLength", 1 << 62)
    minimum, exclusive, maximum = schema.get("minimum"), schema.get("exclusiveMinimum"), schema.get("maximum")
    min_items, max_items = schema.get("minItems", 0), schema.get("maxItems", 1 << 62)
    each = _compile(schema["items"]) if "items" in schema else None
    fields = _compile_object(schema) if {"required", "properties", "additionalProperties"} & schema.keys() else None

    def check(x: Any) -> bool:
        t = type(x)
        if t not in types:
            return False
        if allowed is not None:
            try:
                if (t, x) not in allowed:
                    return False
            except TypeError:  # a list or object: not hashable, so not one of the values
                return False
        if t is str:
            return min_len <= len(x) <= max_len
        if t is int or t is float:
            return ((minimum is None or x >= minimum) and (exclusive is None or x > exclusive)
                    and (maximum is None or x <= maximum))
        if t is list:
            return min_items <= len(x) <= max_items and (each is None or all(map(each, x)))
        return fields is None or t is not dict or fields(x)

    return check


def _compile_object(schema: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    props = {k: _compile(v) for k, v in schema.get("properties", {}).items()}
    required = frozenset(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    closed = extra is False
    other = None if isinstance(extra, bool) else _compile(extra)
    known = frozenset(props)

    def check(x: dict[str, Any]) -> bool:
        if not required <= x.keys() or (closed and not x.keys() <= known):
            return False
        for k, v in x.items():
            c = props.get(k, other)
            if c is not None and not c(v):
                return False
        return True

    return check


_TOP_SCHEMA = {**SCHEMA, "properties": {
    k: ({kk: vv for kk, vv in v.items() if kk != "items"} if k in _ITEM_LISTS else v)
    for k, v in SCHEMA["properties"].items()}}
#: the top level checked without jsonschema (the loader's fast path; it never accepts what
#: jsonschema refuses, see :func:`_compile`)
_TOP_CHECK = _compile({k: v for k, v in _TOP_SCHEMA.items() if k != "$schema"})


@functools.cache
def _validators() -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The jsonschema validators (top level, items, workload settings), made when first needed:
    importing jsonschema costs ~0.13 s that a valid file loaded by the fast path never needs."""
    import jsonschema

    return (jsonschema.Draft202012Validator(_TOP_SCHEMA),
            {k: jsonschema.Draft202012Validator(SCHEMA["properties"][k]["items"]) for k in _ITEM_LISTS},
            {name: jsonschema.Draft202012Validator(schema) for name, schema in _WORKLOAD_PROPERTIES.items()})


def __getattr__(name: str) -> Any:  # the validators as module attributes, made on first use
    if name in ("_TOP_VALIDATOR", "_ITEM_VALIDATORS", "_WORKLOAD_VALIDATORS"):
        top, items, workload = _validators()
        return {"_TOP_VALIDATOR": top, "_ITEM_VALIDATORS": items, "_WORKLOAD_VALIDATORS": workload}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
_ITEM_CHECKS = {k: _compile(SCHEMA["properties"][k]["items"]) for k in _ITEM_LISTS}


class DesignFileError(UsageError):
    """A design file that cannot be read or written.

    ``path`` is the JSON path of the first problem (``components[12].props.gpu_count``, or "" when
    the problem is the file as a whole); ``errors`` lists every ``(path, message)`` found.
    """

    def __init__(self, source: str, errors: list[tuple[str, str]]) -> None:
        self.source = source
        self.errors = list(errors)
        self.path = errors[0][0] if errors else ""
        shown = "; ".join(f"{p}: {m}" if p else m for p, m in errors[:SHOWN_ERRORS])
        more = len(errors) - SHOWN_ERRORS
        if more > 0:
            shown += f" (and {more} more problem{'s' if more > 1 else ''})"
        super().__init__(f"{_printable(source)}: {shown}")


# ------------------------------------------------------------------------------------ to dict
def _component_dict(c: Component) -> dict[str, Any]:
    d: dict[str, Any] = {"id": c.id, "kind": c.kind, "model": c.model}
    if c.name:
        d["name"] = c.name
    if c.parent is not None:
        d["parent"] = c.parent
    if c.slot is not None:
        d["slot"] = c.slot
    if c.props:
        d["props"] = dict(c.props)
    if c.pos is not None:
        d["pos"] = [c.pos[0], c.pos[1]]
    return d


def _link_dict(l: Link) -> dict[str, Any]:
    d: dict[str, Any] = {"id": l.id, "a": l.a, "b": l.b, "medium": l.medium, "speed_Gbps": l.speed_Gbps}
    if l.latency_us:
        d["latency_us"] = l.latency_us
    if l.lanes != 1:
        d["lanes"] = l.lanes
    if l.a_port is not None:
        d["a_port"] = l.a_port
    if l.b_port is not None:
        d["b_port"] = l.b_port
    return d


def to_dict(design: Design) -> dict[str, Any]:
    """The JSON-ready dict of a design (current format version)."""
    topo = design.topology
    head = _head_dict(design)
    return {
        "format": head["format"],
        "version": head["version"],
        "name": head["name"],
        "components": [_component_dict(c) for c in topo.components.values()],
        "links": [_link_dict(l) for l in topo.links.values()],
        **{k: head[k] for k in ("workload", "scenario", "meta", "id_counters")},
    }


def _head_dict(design: Design) -> dict[str, Any]:
    """Everything of :func:`to_dict` but the two item lists, in the file's order."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": design.name,
        "workload": json.loads(json.dumps(design.workload)),
        "scenario": json.loads(json.dumps(design.scenario)),
        "meta": json.loads(json.dumps(design.meta)),
        "id_counters": dict(sorted(design.topology.counters.items())),  # sorted: a file saved again is unchanged
    }


# ---------------------------------------------------------------------------------- from dict
def _printable(text: str) -> str:
    """``text`` with unpaired surrogates written as ``\\udXXX``, so a message can always be shown."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _json_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{_printable(p)}" if out else _printable(p))
    return out


def _schema_message(err: "jsonschema.ValidationError") -> str:
    kind = err.validator
    if kind == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return f"missing field '{missing[0]}'" if missing else err.message
    if kind == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        return f"unknown field '{extra[0]}'" if extra else err.message
    if kind == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        names = {"integer": "an integer", "number": "a number", "string": "a string",
                 "object": "an object {...}", "array": "a list [...]", "boolean": "true or false",
                 "null": "null"}
        return "must be " + " or ".join(names.get(w, w) for w in want)
    if kind == "enum":
        return "must be one of " + ", ".join(str(v) for v in err.validator_value)
    if kind == "const":
        return f"must be {json.dumps(err.validator_value)}"
    if kind in ("minimum", "exclusiveMinimum"):
        zero = _zero_meaning(err)
        return f"must be {'at least' if kind == 'minimum' else 'above'} {number_text(err.validator_value)}{zero}"
    if kind == "maximum":
        return f"must be at most {number_text(err.validator_value)}{_zero_meaning(err)}"
    if kind == "maxItems":
        return f"holds more than {err.validator_value} entries (the limit of this program)"
    if kind in ("minItems",) and err.schema.get("maxItems") == 2:
        return "must be a list of two numbers [x, y]"
    if kind == "minLength":
        return "must not be empty"
    return err.message


def _zero_meaning(err: "jsonschema.ValidationError") -> str:
    """" (0: no checkpoints)" for a scenario setting where 0 has a meaning."""
    path = list(err.absolute_path)
    spec = SCENARIO_SPEC.get(path[1]) if len(path) == 2 and path[0] == "scenario" else None
    return f" (0: {spec.zero})" if spec is not None and spec.zero else ""




def workload_problem(name: str, value: Any) -> str | None:
    """None, or why a design file cannot hold ``value`` as the workload setting ``name`` (the
    check loading does; ``--set workload.NAME=VALUE`` uses it too)."""
    validator = _validators()[2].get(name)
    error = next(validator.iter_errors(value), None) if validator is not None else None
    return None if error is None else _schema_message(error)


class _NonFinite(str):
    """Marks a NaN/Infinity literal found while parsing, so the checker can name its path."""


class _DuplicateKeys(dict):
    """An object in which a key was given twice (JSON keeps the last silently; we refuse it)."""

    twice: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    marked = _DuplicateKeys(obj)
    marked.twice = next(k for k, _ in pairs if k in seen or seen.add(k))
    return marked


def _leaf_problem(value: Any) -> str | None:
    """What is wrong with a single value: NaN/Infinity, an integer beyond ±MAX_INT, or a string
    holding an unpaired UTF-16 surrogate (``"\\ud800"``, which cannot be saved as UTF-8)."""
    t = type(value)
    if t is _NonFinite or (t is float and not math.isfinite(value)):
        return f"{value} is not allowed (use a finite number)"
    if t is int and not -MAX_INT <= value <= MAX_INT:
        return f"the integer is too large (the limit is ±{MAX_INT})"
    if t is str and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"holds an unpaired surrogate at character {exc.start} (not valid Unicode)"
    return None


def _tree_is_sound(data: Any) -> bool:
    """True when nothing is nested more than MAX_DEPTH deep, no key is given twice and no value has
    a :func:`_leaf_problem` (fast: no paths are built; :func:`_check_tree` finds where they are)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    pop, push, isfinite = stack.pop, stack.append, math.isfinite
    while stack:
        node, depth = pop()
        if depth >= MAX_DEPTH or type(node) is _DuplicateKeys:
            return False
        if type(node) is dict:
            if not "".join(node).isascii() and any(map(_leaf_problem, node)):
                return False
            node = node.values()
        for v in node:
            t = type(v)
            if t is dict or t is list or t is _DuplicateKeys:
                push((v, depth + 1))
            elif t is float:
                if not isfinite(v):
                    return False
            elif t is int:
                if not -MAX_INT <= v <= MAX_INT:
                    return False
            elif t is str:
                if not v.isascii() and _leaf_problem(v):
                    return False
            elif t is _NonFinite:
                return False
    return True


def _check_tree(data: Any) -> list[tuple[str, str]]:
    """The problems :func:`_tree_is_sound` looks for, each with its JSON path (walked without
    recursion, so deep nesting cannot exhaust the stack)."""
    if not isinstance(data, (dict, list)) or _tree_is_sound(data):
        return []
    errors: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple, int]] = [(data, (), 0)]
    while stack:
        node, path, depth = stack.pop()
        if not isinstance(node, (dict, list)):
            problem = _leaf_problem(node)
            if problem:
                errors.append((_json_path(path), problem))
            continue
        if depth >= MAX_DEPTH:
            errors.append((_json_path(path), f"nested more than {MAX_DEPTH} levels deep"))
            continue
        if isinstance(node, _DuplicateKeys):
            errors.append((_json_path(path), f"the field '{_printable(node.twice)}' is given twice"))
        if isinstance(node, dict):
            errors.extend((_json_path(path + (k,)), "field name " + _leaf_problem(k))
                          for k in node if _leaf_problem(k))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((v, path + (k,), depth + 1) for k, v in items)
    return sorted(errors)


def _schema_errors(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Structure problems: jsonschema for the top level, the compiled check for each component and
    link (jsonschema explains the first few items that fail it), in document order."""
    top, item_validators, _ = _validators()
    found = [(tuple(e.absolute_path), _schema_message(e)) for e in top.iter_errors(data)]
    for key in _ITEM_LISTS:
        items = data.get(key)
        if type(items) is not list:
            continue
        check, explained, unexplained = _ITEM_CHECKS[key], 0, 0
        for i, item in enumerate(items):
            if check(item):
                continue
            if explained == _EXPLAINED_ITEMS:
                unexplained += 1
                continue
            item_errors = [((key, i) + tuple(e.absolute_path), _schema_message(e))
                           for e in item_validators[key].iter_errors(item)]
            explained += bool(item_errors)
            found.extend(item_errors)
        if unexplained:
            found.append(((key,), f"{unexplained} more entries do not match the file format either"))
    found.sort(key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in e[0]])
    return [(_json_path(path), msg) for path, msg in found]


def _semantic_errors(data: dict[str, Any]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    kind_of: dict[str, str] = {}
    for i, c in enumerate(data["components"]):
        where = f"components[{i}]"
        if c["id"] in seen:
            errors.append((f"{where}.id", f"duplicate id '{c['id']}' (also {seen[c['id']]})"))
        else:
            seen[c["id"]] = where
            kind_of[c["id"]] = c["kind"]
        specs = _FIELD_SPECS[c["kind"]]
        for name, value in c.get("props", {}).items():
            spec = specs.get(name)
            if spec is None:
                errors.append((f"{where}.props.{name}",
                               f"a {c['kind']} has no field '{name}' (known: {', '.join(specs)})"))
                continue
            msg = spec.check(value)
            if msg:
                errors.append((f"{where}.props.{name}", msg))
    for i, l in enumerate(data["links"]):
        where = f"links[{i}]"
        if l["id"] in seen:
            errors.append((f"{where}.id", f"duplicate id '{l['id']}' (also {seen[l['id']]})"))
        else:
            seen[l["id"]] = where
        for end in ("a", "b"):
            if l[end] not in kind_of:
                errors.append((f"{where}.{end}", f"names no component '{l[end]}'"))
        if l["a"] == l["b"]:
            errors.append((f"{where}.b", f"joins '{l['a']}' to itself"))
        for name in ("speed_Gbps", "latency_us", "lanes"):
            if name in l:
                msg = _LINK_SPECS[name].check(l[name])
                if msg:
                    errors.append((f"{where}.{name}", msg))
    parents: dict[str, str] = {}
    for i, c in enumerate(data["components"]):
        parent = c.get("parent")
        if parent is None:
            continue
        if parent not in kind_of:
            errors.append((f"components[{i}].parent", f"names no component '{parent}'"))
            continue
        msg = parent_problem(c["kind"], kind_of[parent])
        if msg:
            errors.append((f"components[{i}].parent", msg))
        parents[c["id"]] = parent
    for i, c in enumerate(data["components"]):
        chain = [c["id"]]
        while chain[-1] in parents and len(chain) <= len(parents):
            chain.append(parents[chain[-1]])
            if chain[-1] == c["id"]:
                errors.append((f"components[{i}].parent", "placement loops: " + " -> ".join(chain)))
                break
    return errors


def _migrate(data: dict[str, Any], source: str) -> dict[str, Any]:
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DesignFileError(source, [("version", "must be a format version number (1 or more)")])
    if version > VERSION:
        raise DesignFileError(source, [("", (
            f"this file was written by a newer DPU Cluster Designer (format version {version}; "
            f"this one reads up to {VERSION}) — update the program"))])
    while data["version"] < VERSION:
        data = MIGRATIONS[data["version"]](data)
    return data


@contextlib.contextmanager
def _gc_paused():
    """Pause the cycle collector while a file's many small objects are made: they hold no cycles,
    and on a 2,048-server design its passes cost about a sixth of the load time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def from_dict(data: Any, source: str = "<file>") -> Design:
    """Check a parsed design file and build the :class:`Design`; raises :class:`DesignFileError`."""
    with _gc_paused():
        return _from_dict(data, source)


def _int(value: Any) -> Any:
    """JSON Schema counts 2.0 as an integer; the model (and Qt's spin boxes) want an int."""
    return int(value) if type(value) is float else value


def _from_dict(data: Any, source: str) -> Design:
    if not isinstance(data, dict):
        raise DesignFileError(source, [("", "not a design file (the top level must be a JSON object)")])
    if data.get("format") != FORMAT:
        raise DesignFileError(source, [("format", f"not a design file (expected \"format\": \"{FORMAT}\")")])
    if data.get("version") == VERSION:
        items = _fast_items(data)
        if items is not None:
            return _design(data, Topology.from_items(*items, data.get("id_counters", {})))
    errors = _check_tree(data)
    if errors:
        raise DesignFileError(source, errors)
    data = _migrate(data, source)
    errors = _schema_errors(data)
    if errors:
        raise DesignFileError(source, errors)
    errors = _semantic_errors(data)
    if errors:
        raise DesignFileError(source, errors)

    comps = []
    for c in data["components"]:
        pos, specs = c.get("pos"), _FIELD_SPECS[c["kind"]]
        props = {k: _int(v) if specs[k].type == "int" else v for k, v in c.get("props", {}).items()}
        comps.append(Component(
            c["id"], c["kind"], c["model"], c.get("name", ""), c.get("parent"), _int(c.get("slot")),
            props, (pos[0], pos[1]) if pos is not None else None))
    links = [Link(l["id"], l["a"], l["b"], l["medium"], l["speed_Gbps"], l.get("latency_us", 0.0),
                  _int(l.get("lanes", 1)), _int(l.get("a_port")), _int(l.get("b_port")))
             for l in data["links"]]
    return _design(data, Topology.from_items(comps, links, data.get("id_counters", {})))


def _design(data: dict[str, Any], topo: Topology) -> Design:
    scenario = {k: _int(v) if k in SCENARIO_SPEC and SCENARIO_SPEC[k].type is int else v
                for k, v in data.get("scenario", {}).items()}
    return Design(topo, data["name"], data.get("workload"), scenario, data.get("meta"))


# ----------------------------------------------------------------------- fast path for big files
_COMPONENT_KEYS = frozenset(SCHEMA["properties"]["components"]["items"]["properties"])
_COMPONENT_REQUIRED = frozenset(SCHEMA["properties"]["components"]["items"]["required"])
_LINK_KEYS = frozenset(SCHEMA["properties"]["links"]["items"]["properties"])
_LINK_REQUIRED = frozenset(SCHEMA["properties"]["links"]["items"]["required"])
_SCALARS = (str, int, float, bool, type(None))


def _id_text(col: list[Any], parsed: bool = False) -> str | None:
    """The column joined into one text when every value is an ASCII string of 1 to 200
    characters (the ``_ID`` schema; non-ASCII text is left to the full check, which looks for
    broken surrogates), else None. ``parsed``: see :func:`_fast_columns`."""
    text = _string_text(col, parsed)
    if text is None or not col:
        return text
    lengths = set(map(len, col))
    return text if min(lengths) >= 1 and max(lengths) <= _ID["maxLength"] else None


def _string_text(col: list[Any], parsed: bool = False) -> str | None:
    """The column joined into one text when every value is an ASCII string, else None.
    ``parsed`` (see :func:`_fast_columns`): the join alone proves the values strings (it
    refuses any other JSON value); else their types are looked at first (a str subclass such
    as :class:`_NonFinite` would join)."""
    if not col:
        return ""
    if not parsed and set(map(type, col)) != {str}:
        return None
    try:
        text = "".join(col)
    except TypeError:
        return None
    return text if text.isascii() else None


def _within(col: list[Any], allowed: frozenset[str]) -> bool:
    """Every value is one of the strings ``allowed`` (a kind or a medium): a value equal to one
    of them is a string (a str subclass equal to one is what jsonschema's ``enum`` accepts too,
    and the NaN marker equals no kind or medium)."""
    try:
        return set(col) <= allowed
    except TypeError:  # a list or an object
        return False


def _ints_ok(col: list[Any], low: int = -MAX_INT) -> bool:
    return not col or (set(map(type, col)) == {int} and min(col) >= low and max(col) <= MAX_INT)


def _numbers_ok(col: list[Any]) -> bool:
    """Finite numbers (int or float, not bool) with integers inside ±MAX_INT (the integers are
    bounded first: ``math.isfinite`` of a 400-digit integer raises OverflowError)."""
    if not col:
        return True
    types = set(map(type, col))
    if types == {int}:  # every int is finite
        return min(col) >= -MAX_INT and max(col) <= MAX_INT
    if types == {float}:
        return all(map(math.isfinite, col))
    return types <= {int, float} and all(-MAX_INT <= v <= MAX_INT if type(v) is int else math.isfinite(v)
                                         for v in col)


def _distinct_ok(col: list[Any], spec: Any) -> bool:
    """``spec.check`` passes for every distinct (type, value) of the column: a generated design
    holds a handful of distinct speeds, so the check runs a handful of times. (A column of one
    type needs no type beside each value: ``set(col)`` then holds the same values.)"""
    if len(set(map(type, col))) == 1:
        return all(spec.check(v) is None for v in set(col))
    return all(spec.check(v) is None for _, v in set(zip(map(type, col), col)))


def _refs_ok(col: list[Any], kind_of: dict[str, str], parsed: bool = False) -> bool:
    """Every value is a ``str`` naming a component (the type first, unless ``parsed``: a str
    subclass such as the NaN marker of :func:`from_dict`'s callers could match a component
    named "NaN"; parsed, a value equal to a component's id is a string)."""
    if not col:
        return True
    if not parsed and set(map(type, col)) != {str}:
        return False
    try:
        return all(map(kind_of.__contains__, col))
    except TypeError:  # a list or an object
        return False


def _kinds_of(col: list[Any], kind_of: dict[str, str], parsed: bool = False) -> list[str | None] | None:
    """The kind of the component each value names, None where it is None or names none; None
    when a given value is not a string (looked at unless ``parsed``, see :func:`_refs_ok`)."""
    if not parsed and not set(map(type, col)) <= {str, type(None)}:
        return None
    try:
        return list(map(kind_of.get, col))
    except TypeError:  # a list or an object
        return None


def _given(col: list[Any]) -> list[Any]:
    """The values of an optional column that are not None (the keys an item gives)."""
    return list(filter(_IS_NOT_NONE, col)) if None in col else col


_IS_NOT_NONE = functools.partial(is_not, None)


def _columns(items: list[dict[str, Any]], required: tuple[str, ...],
             optional: dict[str, Any]) -> tuple[dict[str, list[Any]], dict[str, int]] | None:
    """The columns of a list of dicts, each taken in one C loop (``itemgetter`` for a required
    key, ``dict.get`` with its default for an optional one), with how many items give each
    optional key; None when an item lacks a required key or has a key of neither kind, or is
    no dict.

    The optional keys are counted without a pass of their own: ``extra``, the keys the items
    hold beyond the required ones (one ``len`` pass), is the optional keys they give plus any
    unknown ones, and an item whose value is not the default gives its key, so
    ``given[key] = n - col.count(default)`` never counts more than the items that give it.
    Taking these off ``extra`` key by key (``optional`` in the order the keys are most often
    given), ``extra`` reaching 0 proves every count exact, no unknown key, and no item giving
    a key that is still to be taken (its column is then the default, with no pass at all).
    When it does not reach 0 (an item gives a key with its default value, or a key the schema
    does not know) every key is counted exactly, with a ``__contains__`` pass each."""
    n = len(items)
    cols: dict[str, list[Any]] = {}
    try:
        for key in required:
            cols[key] = list(map(itemgetter(key), items))
    except (KeyError, TypeError):  # (TypeError: an item that is no object)
        return None
    extra = sum(map(len, items)) - n * len(required)
    given: dict[str, int] = {}
    exact = False  # (counted exactly below: a value that does not compare, from a Python caller)
    for key, default in optional.items():
        if extra == 0 and not exact:
            cols[key], given[key] = [default] * n, 0
            continue
        cols[key] = col = list(map(dict.get, items, repeat(key), repeat(default)))
        if not exact:
            try:
                given[key] = n - col.count(default)
            except (TypeError, ValueError):  # e.g. a numpy array, whose == gives no bool
                exact = True
                continue
            extra -= given[key]
    if extra == 0 and not exact:
        return cols, given
    for key in optional:
        given[key] = sum(map(dict.__contains__, items, repeat(key)))
    if sum(map(len, items)) != n * len(required) + sum(given.values()):
        return None  # a key the item schema does not know
    return cols, given


#: floats from this size on may have been integers beyond 64 bits (see :func:`_plain_design`)
_BIG_FLOAT = 2.0**63


def _holds_big_float(data: dict[str, Any], cols: dict[str, Any]) -> bool:
    """Whether a float of 2^63 or more in size is in the document: in the head, a link's speed or
    latency or a props value (positions are bounded far below; slots, lanes, ports and counters
    must be integers, which such a float is not)."""
    c, l = cols["components"], cols["links"]
    props = [v for v in chain.from_iterable(map(dict.values, filter(None, c["props"])))
             if type(v) is float]
    head = [v for v in _tree_values({k: v for k, v in data.items() if k not in _ITEM_LISTS}) if type(v) is float]
    # the distinct values of a link column (a handful): the columns passed the checks, so their
    # integers are within 2^53 and no such float can be hidden by an equal integer; a latency
    # no link gives is the default 0.0
    links = [v for v in set(l["speed_Gbps"]) if type(v) is float]
    if cols["link_given"]["latency_us"]:
        links += [v for v in set(l["latency_us"]) if type(v) is float]
    return any(col and max(map(abs, col)) >= _BIG_FLOAT for col in (links, props, head))


def _tree_values(node: Any) -> list[Any]:
    """Every value (not container) in a parsed JSON value, walked without recursion."""
    out, stack = [], [node]
    while stack:
        node = stack.pop()
        for v in (node.values() if type(node) is dict else node):
            if type(v) is dict or type(v) is list:
                stack.append(v)
            else:
                out.append(v)
    return out


def _head_count(node: Any) -> tuple[int, int]:
    """``(key/value pairs, ':' inside keys and strings)`` of a parsed JSON value (walked without
    recursion): with the items' own counts, what the text's ':' must add up to when no key was
    given twice (see :func:`_plain_design`)."""
    pairs = colons = 0
    stack = [node]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            pairs += len(node)
            colons += "".join(node).count(":")
            node = node.values()
        elif type(node) is not list:
            continue
        for v in node:
            t = type(v)
            if t is str:
                colons += v.count(":")
            elif t is dict or t is list:
                stack.append(v)
    return pairs, colons


_COMPONENT_REQUIRED_KEYS = ("id", "kind", "model")
_LINK_REQUIRED_KEYS = ("id", "a", "b", "medium", "speed_Gbps")
assert set(_COMPONENT_REQUIRED_KEYS) == _COMPONENT_REQUIRED and set(_LINK_REQUIRED_KEYS) == _LINK_REQUIRED
_KIND_SET, _MEDIUM_SET = frozenset(KINDS), frozenset(MEDIA)
assert not any(":" in name for name in _KIND_SET | _MEDIUM_SET)  # (their ':' need no counting)
#: the optional keys of an item with the value the model takes when the key is left out
#: (in the order they are most often given: see :func:`_columns`)
_COMPONENT_OPTIONAL = {"parent": None, "slot": None, "pos": None, "props": None, "name": ""}
_LINK_OPTIONAL = {"lanes": 1, "latency_us": 0.0, "a_port": None, "b_port": None}
assert set(_COMPONENT_OPTIONAL) == _COMPONENT_KEYS - _COMPONENT_REQUIRED
assert set(_LINK_OPTIONAL) == _LINK_KEYS - _LINK_REQUIRED
assert not any(":" in k for k in _COMPONENT_KEYS | _LINK_KEYS | {s.name for specs in FIELDS.values() for s in specs})


def _fast_columns(data: dict[str, Any], parsed: bool = False) -> dict[str, Any] | None:
    """The checked columns of a current-version file whose every item passes the item checks of
    :func:`_check_tree`, :data:`SCHEMA` and :func:`_semantic_errors`, proved column by column (a
    set of types, a min and a max over each field, a spec check per distinct value) instead of
    item by item; the head (name, workload, scenario ...) goes through the full checks. None as
    soon as anything is not plainly right: the full path then finds and words the problem (this
    path only ever accepts what the full one accepts, and builds the same objects).

    ``parsed``: ``data`` is what json.loads (with no hook and NaN refused) or orjson made of a
    text, so each value is exactly one of dict, list, str, int, float, bool and None, and a float
    is never NaN. Then a column is not looked over for its types where the check that follows
    already fails on any other type: ``"".join`` refuses anything but strings, a dict lookup of a
    list raises TypeError, an item that is not a dict has no key to take, and a number equal to a
    kind's name is no JSON value (from any other caller, such as :func:`from_dict` of a dict made
    in Python, every type is looked at).

    Besides the columns: ``pairs`` (the key/value pairs of the whole document) and ``colons``
    (the ':' inside its keys and strings), which :func:`_plain_design` holds against the text."""
    if type(data) is not dict:
        return None
    comps, links = data.get("components"), data.get("links")
    if type(comps) is not list or type(links) is not list or len(comps) > MAX_COMPONENTS \
            or len(links) > MAX_LINKS:
        return None
    head = {k: v for k, v in data.items() if k not in _ITEM_LISTS}
    if not _tree_is_sound(head) or not _TOP_CHECK({**head, "components": [], "links": []}):
        return None
    if not parsed and (not set(map(type, comps)) <= {dict} or not set(map(type, links)) <= {dict}):
        return None
    got = _columns(comps, _COMPONENT_REQUIRED_KEYS, _COMPONENT_OPTIONAL)
    if got is None:
        return None
    c, c_given = got
    # --- components
    n = len(comps)
    ids, kinds, parents, slots, poss = c["id"], c["kind"], c["parent"], c["slot"], c["pos"]
    # (a column no item gives holds only the model's default, and is not looked at)
    given_slots = _given(slots) if c_given["slot"] else []
    # a kind is one of KINDS (whose names hold no ':'); every value equal to one is a string
    texts = [_id_text(ids, parsed), _string_text(c["model"], parsed),
             _string_text(c["name"], parsed) if c_given["name"] else ""]
    if None in texts or not _within(kinds, _KIND_SET) or not _ints_ok(given_slots, 0) \
            or len(given_slots) != c_given["slot"]:
        return None
    kind_of = dict(zip(ids, kinds))
    if len(kind_of) != n:
        return None  # a duplicate id
    # a parent or a link end must be a component's id, so it is a sound id text already; its
    # ':' are counted only when some id holds one
    id_colons = ":" in texts[0]
    # the kind of each component's parent: None for no parent, and for a parent that names no
    # component (no kind is None), so the Nones add up to the items without one exactly when
    # every parent given is known and none is given as null
    parent_kinds = _kinds_of(parents, kind_of, parsed) if c_given["parent"] else []
    if parent_kinds is None or c_given["parent"] and parent_kinds.count(None) != n - c_given["parent"]:
        return None
    if id_colons:
        texts.append("".join(_given(parents)))
    given_pos = _given(poss) if c_given["pos"] else []
    if len(given_pos) != c_given["pos"] or not set(map(type, given_pos)) <= {list} \
            or not set(map(len, given_pos)) <= {2}:
        return None
    coords = list(chain.from_iterable(given_pos))
    if not (_numbers_ok(coords) if not parsed else set(map(type, coords)) <= {int, float}) \
            or (coords and (min(coords) < -MAX_COORD or max(coords) > MAX_COORD)):
        return None  # (parsed: no float is NaN, so min and max bound every coordinate)
    props = _fast_props(kinds, c["props"], c_given["props"])
    if props is None:
        return None
    props, prop_pairs, prop_colons = props
    # a parent of the right kind also rules out placement loops: NICs/DPUs sit in servers,
    # servers/switches/storage in racks, racks in nothing
    for kind, parent_kind in set(zip(kinds, parent_kinds)):
        if parent_kind is not None and parent_problem(kind, parent_kind):
            return None
    # --- links
    got = _columns(links, _LINK_REQUIRED_KEYS, _LINK_OPTIONAL)
    if got is None:
        return None
    l, l_given = got
    lids, a_end, b_end, media = l["id"], l["a"], l["b"], l["medium"]
    speeds, latency, lanes = l["speed_Gbps"], l["latency_us"], l["lanes"]
    texts.append(_id_text(lids, parsed))
    if texts[-1] is None or not _refs_ok(a_end, kind_of, parsed) or not _refs_ok(b_end, kind_of, parsed) \
            or not _within(media, _MEDIUM_SET) or not _numbers_ok(speeds) \
            or not _distinct_ok(speeds, _LINK_SPECS["speed_Gbps"]):
        return None
    if l_given["latency_us"] and not (_numbers_ok(latency) and _distinct_ok(latency, _LINK_SPECS["latency_us"])) \
            or l_given["lanes"] and not (_ints_ok(lanes) and _distinct_ok(lanes, _LINK_SPECS["lanes"])) \
            or l_given["a_port"] and not _ints_ok(_given(l["a_port"])) \
            or l_given["b_port"] and not _ints_ok(_given(l["b_port"])):
        return None
    every_id = set(kind_of)
    every_id.update(lids)
    if any(map(operator.eq, a_end, b_end)) or len(every_id) != n + len(lids):
        return None  # a link joining a component to itself, or an id given twice
    if id_colons:
        texts += ["".join(a_end), "".join(b_end)]
    head_pairs, head_colons = _head_count(head)
    item_pairs = (n * len(_COMPONENT_REQUIRED_KEYS) + sum(c_given.values())
                  + len(links) * len(_LINK_REQUIRED_KEYS) + sum(l_given.values()))
    return {"components": c, "links": l, "props": props, "link_given": l_given,
            "pairs": head_pairs + len(_ITEM_LISTS) + item_pairs + prop_pairs,
            "colons": head_colons + sum(t.count(":") for t in texts) + prop_colons}


def _fast_props(kinds: list[str], col: list[Any], given: int) -> tuple[list[dict], int, int] | None:
    """Each component's props (a new dict each, integers as ints) when every given ``props`` is
    an object of known scalar fields whose values pass their spec, with the pairs and the ':' of
    their string values; None otherwise. Only the components that give props are looked at
    (a 131k-GPU design: the 13k switches and storage of its 199k components), and each distinct
    props object (with its component's kind and its values' types: 1, 1.0 and true are told
    apart) is checked once: the switches of a design repeat a handful."""
    props: list[dict[str, Any]] = [{} for _ in col]
    where = [i for i, p in enumerate(col) if p is not None] if given else []
    if len(where) != given:
        return None  # "props": null
    pairs = colons = 0
    seen: dict[tuple, tuple[bool, int] | None] = {}
    for i in where:
        values = col[i]
        if type(values) is not dict:
            return None
        try:
            key = (kinds[i], *values.items(), *map(type, values.values()))
            known = seen.get(key, False)
        except TypeError:  # a list or an object as a value: no scalar
            return None
        if known is False:
            known = seen[key] = _props_verdict(kinds[i], values)
        if known is None:
            return None
        fix, found = known
        props[i] = {k: _int(v) if k in fix else v for k, v in values.items()} if fix else dict(values)
        colons += found
        pairs += len(values)
    return props, pairs, colons


def _props_verdict(kind: str, values: dict[str, Any]) -> tuple[frozenset[str], int] | None:
    """None unless every field of ``values`` is one a ``kind`` has, with a scalar value that
    passes its spec; else the fields whose value becomes an int (a float given to an integer
    field) and the ':' in its string values."""
    if not "".join(values).isascii():
        return None
    specs = _FIELD_SPECS[kind]
    fix, colons = [], 0
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None or type(value) not in _SCALARS or _leaf_problem(value) or spec.check(value):
            return None
        if spec.type == "int" and type(value) is float:
            fix.append(name)
        if type(value) is str:
            colons += value.count(":")
    return frozenset(fix), colons


def _build_items(cols: dict[str, Any]) -> tuple[list[Component], list[Link]]:
    """The Components and Links of :func:`_fast_columns`' columns (the cycle collector paused:
    the objects hold no cycles)."""
    c, l = cols["components"], cols["links"]
    poss = c["pos"]
    pos = list(map(tuple, poss)) if None not in poss else [(p[0], p[1]) if p is not None else None for p in poss]
    with _gc_paused():
        built = list(map(Component, c["id"], c["kind"], c["model"], c["name"], c["parent"], c["slot"],
                         cols["props"], pos))
        wired = list(map(Link, l["id"], l["a"], l["b"], l["medium"], l["speed_Gbps"], l["latency_us"],
                         l["lanes"], l["a_port"], l["b_port"]))
    return built, wired


def _fast_items(data: dict[str, Any]) -> tuple[list[Component], list[Link]] | None:
    """The components and links of a current-version file whose items :func:`_fast_columns`
    proves sound, or None (the full checks then find and word the problem). Generated designs,
    and most saved ones, take this path: it loads a 131k-GPU design several times faster."""
    cols = _fast_columns(data)
    return None if cols is None else _build_items(cols)


# ------------------------------------------------------------------------------ text and files
def _reject_constant(name: str) -> _NonFinite:
    return _NonFinite(name)


def loads(text: str, source: str = "<file>") -> Design:
    """Parse design-file text (see :func:`from_dict`): the plain way first
    (:func:`_plain_design`), else the careful one, which finds and words every problem."""
    design = _plain_design(text)
    return design if design is not None else from_dict(_parse(text, source), source)


def _plain_design(text: str | bytes) -> Design | None:
    """The design of a plainly sound file, read by the C parser alone, or None
    (:func:`_plain_checked`, then :func:`_plain_built`).

    The careful parse (:func:`_parse`) hands every object to a Python hook that refuses a key
    given twice: ~0.5 s of a 131k-GPU design's 66 MB. Here json.loads builds the dicts itself,
    and a key given twice is found by counting instead: every key/value pair of the text has
    its ':', and every other ':' of the text is inside a string, so with no key given twice
    ``text.count(":") == pairs + ':' inside the keys and strings`` of what was parsed; a lost
    pair (and its value's colons) can only make the right side smaller. A ``\\u003a`` escape
    would put a ':' in a string that the text does not show, so a text with any ``\\u003``
    goes the careful way, as does anything :func:`_fast_columns` does not prove sound (the
    careful way then refuses it with its message, or loads it).

    With orjson installed, it parses (the bytes as read: no decoding). orjson reads the JSON
    that json.loads reads, to the same values (correctly rounded floats, the same strings),
    except that it refuses NaN, Infinity, a lone surrogate and a byte-order mark (such text goes
    the careful way) and reads an integer beyond 64 bits as a float: a document holding a float
    of 2^63 or more goes the careful way, which keeps such an integer exact and refuses it."""
    with _gc_paused():  # the parsed document is gone before the collector runs again
        checked = _plain_checked(text)
        design = None if checked is None else _plain_built(*checked)
        del checked  # (so is every column: the collector's first pass has only the design to walk)
    return design


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # (the careful way says where it is)


def _plain_checked(text: str | bytes) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The parsed document of :func:`_plain_design` and its checked columns, or None. Call it
    with the cycle collector paused until :func:`_plain_built` has made the objects."""
    binary = type(text) is bytes
    slash, escape = (b"\\", b"\\u003") if binary else ("\\", "\\u003")
    if slash in text and escape in text:  # (a backslash is found by memchr: most files hold none)
        return None
    try:
        data = orjson.loads(text) if orjson is not None else json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # bad JSON, NaN, a huge integer literal, deep nesting
        return None
    cols = _checked_columns(data, _colons(text), lossy=orjson is not None)
    return None if cols is None else (data, cols)


def _colons(text: str | bytes) -> int:
    """``text.count(":")``. Bytes of a big file are counted by numpy in 1 MiB pieces when the
    program has loaded numpy already (the engine does; a quarter of bytes.count's time, which
    compares byte by byte: ~40 ms of a 66 MB file), else by ``count``."""
    np = sys.modules.get("numpy")
    if type(text) is not bytes or np is None or len(text) < 1 << 22:
        return text.count(b":" if type(text) is bytes else ":")
    codes, step = np.frombuffer(text, np.uint8), 1 << 20
    return sum(int(np.count_nonzero(codes[i:i + step] == ord(":"))) for i in range(0, len(codes), step))


def _checked_columns(data: Any, colons: int, lossy: bool = False) -> dict[str, Any] | None:
    """The columns of a document parsed without the duplicate-key hook, when
    :func:`_fast_columns` proves it sound and its pairs and strings account for the text's
    ``colons``; else None. ``lossy``: the parser reads an integer beyond 64 bits as a float
    (orjson), so a float that large sends the document the careful way."""
    if type(data) is not dict or data.get("format") != FORMAT or data.get("version") != VERSION:
        return None
    cols = _fast_columns(data, parsed=True)
    if cols is None or cols["pairs"] + cols["colons"] != colons:
        return None
    if lossy and _holds_big_float(data, cols):
        return None
    return cols


def _plain_built(data: dict[str, Any], cols: dict[str, Any]) -> Design:
    """The design of :func:`_plain_checked`'s document and columns. The parsed items are
    dropped first (their values live on in the columns): the memory of their ~585k dicts at
    131k GPUs is free again for the objects."""
    data["components"].clear()
    data["links"].clear()
    ids = (cols["components"]["id"], cols["links"]["id"])
    return _design(data, Topology.from_items(*_build_items(cols), data.get("id_counters", {}), ids=ids))


def _parse(text: str, source: str) -> Any:
    try:
        with _gc_paused():
            data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise DesignFileError(source, [("", "the file is empty")]) from None
        at_end = not text[exc.pos:].strip() or exc.msg.startswith("Unterminated string")
        why = "the file ends early (truncated?)" if at_end else exc.msg
        raise DesignFileError(f"{source}:{exc.lineno}:{exc.colno}", [("", f"not valid JSON: {why}")]) from None
    except RecursionError:
        raise DesignFileError(source, [("", f"nested more than {MAX_DEPTH} levels deep")]) from None
    except ValueError as exc:  # an integer literal with more digits than Python converts
        raise DesignFileError(source, [("", f"not valid JSON: {exc.args[0].split(':')[0]}")]) from None
    return data


def dumps(design: Design, source: str = "<design>") -> str:
    """The file text: one component or link per line, so files diff well and stay compact.

    A value that the loader would refuse (NaN, a huge integer, a broken string, deep nesting) or
    that is not JSON at all is refused here, with its path, so that no saved file fails to load.
    A design whose every item is plainly sound is written from its columns
    (:func:`_column_text`, the same text); any other goes through :func:`to_dict`."""
    try:
        text = _column_text(design)
    except (TypeError, ValueError, AttributeError, IndexError, KeyError):
        text = None  # the dict path below writes it, or words what is wrong
    if text is not None:
        return text
    try:
        data = to_dict(design)
        for key, limit in (("components", MAX_COMPONENTS), ("links", MAX_LINKS)):
            if len(data[key]) > limit:
                raise DesignFileError(source, [(key, (
                    f"cannot be saved: {len(data[key]):,} {key}; this program reads design files "
                    f"of up to {limit:,} {key}"))])
        if _fast_columns(data) is None:  # else every item is proved sound already
            errors = _check_tree(data)
            if errors:
                raise DesignFileError(source, [(p, f"cannot be saved: {m}") for p, m in errors])
        head = {k: v for k, v in data.items() if k not in ("components", "links")}
        encode = _item_encoder()
        lines = ["{"]
        for key, value in head.items():
            lines.append(f" {json.dumps(key)}: {encode(value)},")
        for key in ("components", "links"):
            body = _item_lines(encode, data[key])
            lines.append(f" {json.dumps(key)}: [\n  {body}\n ]" if body else f" {json.dumps(key)}: []")
            lines[-1] += "," if key == "components" else ""
        lines.append("}")
    except (TypeError, ValueError) as exc:  # a value that is not JSON (a set, a numpy integer...)
        raise DesignFileError(source, [("", f"cannot be saved: {exc}")]) from None
    return "\n".join(lines) + "\n"


def _column_text(design: Design) -> str | None:
    """:func:`dumps`' text written from the items' columns, with no dict per item, or None when
    any written value is not plainly sound (then the dict path writes it or refuses it).

    What the dict path proves by :func:`_check_tree` is proved here column by column: every
    written string is a ``str`` that UTF-8 can hold (one join, one check), every written number
    an ``int`` or ``float`` (not bool, not numpy) that is finite and within ±MAX_INT, every props
    object sound to the depth limit. The text is the dict path's: strings through json's C
    encoder (``ensure_ascii=False``), numbers by ``repr`` (json's own text for int and float),
    a props object by the same C encoder, each field left out exactly when :func:`to_dict`
    leaves it out, fields in the same order, one item a line."""
    topo = design.topology
    comps, links = list(topo.components.values()), list(topo.links.values())
    if len(comps) > MAX_COMPONENTS or len(links) > MAX_LINKS or not set(map(type, comps)) <= {Component} \
            or not set(map(type, links)) <= {Link}:
        return None
    head = _head_dict(design)
    if not _tree_is_sound(head):
        return None
    enc = json.encoder.encode_basestring
    encode = _item_encoder()
    # --- components: id, kind, model, name?, parent?, slot?, props?, pos?
    ids, kinds, models, names, parents, slots, props, poss = (
        list(map(attrgetter(f), comps)) for f in ("id", "kind", "model", "name", "parent", "slot", "props", "pos"))
    given_props = [p for p in props if p]
    given_pos = _given(poss)
    pairs = set(map(type, given_pos)) <= {tuple} and set(map(len, given_pos)) <= {2}
    coords = list(chain.from_iterable(given_pos)) if pairs else [p[0] for p in given_pos] + [p[1] for p in given_pos]
    if not (_saved_strings(ids) and _saved_strings(kinds) and _saved_strings(models) and _saved_strings(names)
            and _saved_strings(_given(parents)) and _saved_numbers(_given(slots)) and _saved_numbers(coords)
            and set(map(type, given_props)) <= {dict} and _props_sound(given_props)):
        return None
    name_text = {n: f', "name": {enc(n)}' if n else "" for n in set(names)}
    parent_text = {p: f', "parent": {enc(p)}' if p is not None else "" for p in set(parents)}
    tails = [map(name_text.__getitem__, names) if any(names) else None,
             map(parent_text.__getitem__, parents) if parents.count(None) != len(parents) else None,
             [f', "slot": {v!r}' if v is not None else "" for v in slots] if slots.count(None) != len(slots) else None,
             [f', "props": {encode(p)}' if p else "" for p in props] if given_props else None,
             (map(operator.mod, repeat(', "pos": [%r, %r]'), poss) if pairs and not len(given_pos) < len(poss)
              else [f', "pos": [{p[0]!r}, {p[1]!r}]' if p is not None else "" for p in poss]) if given_pos else None]
    comp_lines = _joined_items('{"id": %s, "kind": %s, "model": %s', [
        map(enc, ids), _coded(enc, kinds), _coded(enc, models)], tails)
    # --- links: id, a, b, medium, speed_Gbps, latency_us?, lanes?, a_port?, b_port?
    lids, a_end, b_end, media, speeds, latency, lanes, a_port, b_port = (
        list(map(attrgetter(f), links))
        for f in ("id", "a", "b", "medium", "speed_Gbps", "latency_us", "lanes", "a_port", "b_port"))
    written_latency = [v for v in latency if v]
    written_lanes = [v for v in lanes if v != 1]
    if not (_saved_strings(lids) and _saved_strings(a_end) and _saved_strings(b_end) and _saved_strings(media)
            and _saved_numbers(speeds) and _saved_numbers(written_latency) and _saved_numbers(written_lanes)
            and _saved_numbers(_given(a_port)) and _saved_numbers(_given(b_port))):
        return None
    tails = [[f', "latency_us": {v!r}' if v else "" for v in latency] if written_latency else None,
             [f', "lanes": {v!r}' if v != 1 else "" for v in lanes] if written_lanes else None,
             [f', "a_port": {v!r}' if v is not None else "" for v in a_port] if a_port.count(None) != len(a_port) else None,
             [f', "b_port": {v!r}' if v is not None else "" for v in b_port] if b_port.count(None) != len(b_port) else None]
    link_lines = _joined_items('{"id": %s, "a": %s, "b": %s, "medium": %s, "speed_Gbps": %s', [
        map(enc, lids), map(enc, a_end), map(enc, b_end), _coded(enc, media), map(repr, speeds)], tails)
    lines = ["{"] + [f" {json.dumps(key)}: {encode(value)}," for key, value in head.items()]
    lines.append(f' "components": [\n  {comp_lines}\n ],' if comps else ' "components": [],')
    lines.append(f' "links": [\n  {link_lines}\n ]' if links else ' "links": []')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _props_sound(given: list[dict[str, Any]]) -> bool:
    """What :func:`_tree_is_sound` proves of the props objects (at their depth in the file),
    proved by columns when every value is a scalar: string keys and values that UTF-8 can hold,
    numbers finite and integers within ±MAX_INT."""
    values = list(chain.from_iterable(map(dict.values, given)))
    types = set(map(type, values))
    if not types <= {str, int, float, bool, type(None)}:
        return _tree_is_sound([[given]])  # nested values: walked (props sit 3 levels deep)
    keys = list(chain.from_iterable(given))
    return (_saved_strings(keys) and _saved_strings([v for v in values if type(v) is str])
            and _numbers_ok([v for v in values if type(v) is int or type(v) is float]))


def _saved_strings(col: list[Any]) -> bool:
    """Every value a ``str`` that UTF-8 can hold (no unpaired surrogate): what _check_tree asks
    of a written string."""
    if not col:
        return True
    if set(map(type, col)) != {str}:
        return False
    text = "".join(col)
    return text.isascii() or _leaf_problem(text) is None


def _saved_numbers(col: list[Any]) -> bool:
    """Every value an ``int`` or ``float`` (exactly: not bool, not a numpy number, whose text
    ``repr`` would not give as json does), finite, integers within ±MAX_INT."""
    return not col or (set(map(type, col)) <= {int, float} and _numbers_ok(col))


def _coded(enc: Callable[[str], str], col: list[str]) -> Iterator[str]:
    """``enc(value)`` of each value, each distinct value encoded once (kinds, models and media:
    a handful of distinct strings)."""
    text = {v: enc(v) for v in set(col)}
    return map(text.__getitem__, col)


def _joined_items(template: str, fields: list[Any], tails: list[Any]) -> str:
    """Items ``template % fields`` followed by their optional fields' text and ``}``, joined by
    ``,\n  `` (the file's one item a line). ``fields``: columns of text; ``tails``: columns of
    optional text ("" where an item leaves the field out), None for a field no item writes. All
    in C loops: ``%`` per item, ``"".join`` per item of the tails, one join."""
    tails = [t for t in tails if t is not None]
    if tails:
        fields = [*fields, map("".join, zip(*tails))]
        template += "%s"
    return ",\n  ".join(map(operator.mod, repeat(template + "}"), zip(*fields)))


def _item_lines(encode: Callable[[Any], str], items: list[dict[str, Any]]) -> str:
    """``",\n  ".join(map(encode, items))`` for a list of dicts, encoded in one call when that is
    provably the same text: the list encodes as ``[i1, i2, ...]``, so each of the n - 1 joins
    between items is a ``}, {``; when the text holds exactly n - 1 of them (none inside an item,
    e.g. in a string or a list of dicts) they are the joins, and each becomes ``},\n  {``."""
    if not items:
        return ""
    text = encode(items)
    if text.count("}, {") == len(items) - 1:
        return text[1:-1].replace("}, {", "},\n  {")
    return ",\n  ".join(map(encode, items))


def _item_encoder() -> Callable[[Any], str]:
    """``json.dumps(v, allow_nan=False, ensure_ascii=False)`` for one value, with the C encoder
    made once (json.dumps makes an encoder per call: most of the time of 580k one-line items)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(allow_nan=False, ensure_ascii=False).encode

    def refuse(o: Any) -> Any:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")

    enc = make({}, refuse, json.encoder.encode_basestring, None, ": ", ", ", False, False, False)
    return lambda value: "".join(enc(value, 0))


def load(path: str | os.PathLike[str]) -> Design:
    """Read a design file; every problem is a :class:`DesignFileError` naming the file.

    The size is checked before anything is read, and no more than :data:`MAX_FILE_BYTES` + 1 bytes
    are ever read (a file that grows meanwhile, or a device, cannot exhaust memory)."""
    source = str(path)

    def refuse(message: str) -> DesignFileError:
        return DesignFileError(source, [("", message)])

    too_big = f"this program reads design files up to {MAX_FILE_BYTES // 2**20} MiB"
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise refuse("is a folder, not a design file")
        if not stat.S_ISREG(info.st_mode):
            raise refuse("is not a regular file (a device or a pipe?)")
        if info.st_size > MAX_FILE_BYTES:
            raise refuse(f"the file is {info.st_size / 2**20:.0f} MiB; {too_big}")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise refuse("no such file") from None
    except OSError as exc:
        raise refuse(f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise refuse(f"the file is larger than {MAX_FILE_BYTES // 2**20} MiB; {too_big}")
    if orjson is not None:  # parsed from the bytes (the text is made only for the careful way)
        with _gc_paused():
            checked = _plain_checked(raw[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw)
            if checked is not None:
                del raw  # (66 MB at 131k GPUs) gone before the objects are made
                design = _plain_built(*checked)
                del checked  # (as in _plain_design)
                return design
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise refuse(f"not a text (UTF-8) file (byte {exc.start})") from None
    del raw  # the bytes (66 MB at 131k GPUs) are gone before the objects are made
    if orjson is None:
        with _gc_paused():
            checked = _plain_checked(text)
            if checked is not None:
                del text
                design = _plain_built(*checked)
                del checked
                return design
    data = _parse(text, source)
    del text
    return from_dict(data, source)


def save(design: Design, path: str | os.PathLike[str], *,
         inputs: tuple[str | os.PathLike[str] | None, ...] = ()) -> None:
    """Write a design file atomically: a temporary file in the target's folder is written, flushed
    and fsync'ed, then renamed over the target and the folder fsync'ed. If anything fails the old
    file is left as it was and the temporary file is removed. The file keeps its permissions (a new
    file gets those the umask gives, as ``open`` would).

    The path is checked first (``safeio.check_output_path``): a folder, a device such as
    /dev/null, a FIFO or a socket is refused (renaming over it would replace it), and so is one of
    ``inputs`` (the files the design was made from); a symlink stays a link and the file it points
    to is replaced. The design is refused too when the loader would refuse the file (more
    components or links than it reads, or a file over :data:`MAX_FILE_BYTES`)."""
    from designer.safeio import check_output_path

    try:
        target = check_output_path(path, inputs=inputs, what="design file")
    except DesignFileError:
        raise
    except UsageError as exc:
        err = DesignFileError(str(path), [("", str(exc))])
        err.args = (str(exc),)  # the message names the file already
        raise err from None
    folder = target.parent
    data = dumps(design, str(path)).encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise DesignFileError(str(path), [("", (
            f"cannot be saved: the file would be {len(data) / 2**20:.1f} MiB and this program reads "
            f"design files up to {MAX_FILE_BYTES // 2**20} MiB; make the design smaller"))])
    tmp_name = None
    try:
        mode = _mode_for(target)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, mode)  # mkstemp makes it 0600
        os.replace(tmp_name, target)
        tmp_name = None
        _fsync_folder(folder)
    except OSError as exc:
        raise DesignFileError(str(path), [("", f"cannot save: {exc.strerror or exc}")]) from None
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass


def _mode_for(target: Path) -> int:
    """Permission bits for the saved file: the old file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


@functools.cache
def _umask() -> int:
    """The process umask (read once: it can only be read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
