"""Design files: JSON that holds the topology, canvas positions, workload and scenario (no Qt).

Layout of a file (format version 1)::

    {"format": "dpu-cluster-design", "version": 1, "name": "...",
     "components": [{"id", "kind", "model", "name"?, "parent"?, "slot"?, "props"?, "pos"?}, ...],
     "links": [{"id", "a", "b", "medium", "speed_Gbps", "latency_us"?, "lanes"?, "a_port"?,
                "b_port"?}, ...],
     "workload": {...}, "scenario": {...}, "meta": {...}, "id_counters": {"srv": 12, ...}}

Optional keys are left out when they hold their default, so ``to_dict(from_dict(d)) == d`` for every
saved file. :data:`SCHEMA` is the one description of the structure: the published JSON Schema
(:func:`schema_text`, ``dpu-designer schema``, ``resources/schema/``) and the loader's decoder
(msgspec Struct types made from it, :func:`_decoded_type`) both come from it.

Loading has one path (:func:`_decoded`, :func:`from_dict` for a document already parsed):

1. msgspec decodes the bytes into the Struct types: JSON syntax, types, bounds, required and
   unknown fields in one pass, in C. A key given twice is kept once by any decoder; the text's
   members (``"key":`` pairs, :func:`_text_members`) are counted against the decoded ones.
2. One pass over the items' columns (:func:`_built`) checks what the types do not say (integers
   within ±MAX_INT, JSON Schema's integers given as 2.0, the workload and scenario settings, ids
   unique, link ends, parents, props fields of each kind), each check a set, a min/max or a spec
   check per distinct value, and words each problem it finds with its JSON path; then builds.

A file refused in step 1 is read again by :func:`_parse` (json with a duplicate-key hook) only to
word the problem where it is: a syntax error with its line and column, NaN, a key given twice, or
each field decoded on its own (:func:`_structure_problems`). The first few problems are reported.
Nothing in a file is ever executed. Writing (:func:`dumps`) has one path too: the text of
:func:`to_dict` written from the items' columns.

Limits (a file beyond them is refused with a message): :data:`MAX_FILE_BYTES` (256 MiB),
:data:`MAX_COMPONENTS` components, :data:`MAX_LINKS` links, :data:`MAX_DEPTH` levels of nesting,
integers up to ±:data:`MAX_INT`. NaN and Infinity are not JSON and are refused, and so are a key given
twice in one object and strings that are not valid Unicode.

Older format versions are brought up to date by :data:`MIGRATIONS` (version n -> n+1) on load.
"""

from __future__ import annotations

import codecs
import json
import math
import operator
import os
import re
import stat
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import Annotated, Any, Callable, Iterable, Literal, Union, cast

import msgspec

from designer.errors import UsageError
from designer.gcpause import collector_paused
from designer.topology.design import SCENARIO_SPEC, Design, number_text, scenario_problems
from designer.topology.kinds import FIELDS, KINDS, LINK_FIELDS, MEDIA
from designer.topology.model import Component, Link, Topology, parent_problem
from designer.topology.workload_spec import json_schema_properties

FORMAT = "dpu-cluster-design"
VERSION = 1
#: the published schema's identifier (``dpu-designer schema``)
SCHEMA_ID = "urn:dpu-cluster-designer:schema:dpu-cluster-design:1"

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


# --------------------------------------------------------------- the decoder, made from SCHEMA
def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    """The msgspec.Meta arguments of a schema's bounds (``minimum`` -> ``ge`` ...)."""
    return {arg: schema[key] for key, arg in _META_ARGS if key in schema}


_META_ARGS = (("minimum", "ge"), ("exclusiveMinimum", "gt"), ("maximum", "le"), ("minLength", "min_length"),
              ("maxLength", "max_length"), ("minItems", "min_length"), ("maxItems", "max_length"))
_KNOWN_KEYWORDS = {"type", "enum", "items", "properties", "required", "additionalProperties"} | {k for k, _ in _META_ARGS}


def _decoded_type(schema: dict[str, Any], name: str = "") -> Any:
    """The msgspec type that decodes a value of ``schema`` and checks it in the same pass.

    JSON Schema's ``integer`` counts 2.0 as an integer: such a value decodes as ``int | float``
    and :func:`_integral` refuses a float with a fraction. An object whose ``additionalProperties``
    is false becomes a Struct (unknown fields refused, a field left out is ``UNSET``); one that
    admits other keys (the workload, the scenario) a ``dict`` whose known keys
    :func:`_head_problems` checks with their own types. A keyword this does not know fails when
    the module loads, so the decoder never checks less than the schema says."""
    unknown = set(schema) - _KNOWN_KEYWORDS - {"const"}
    if unknown:
        raise ValueError(f"_decoded_type: schema keywords {sorted(unknown)} are not supported")
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    if "const" in schema or "type" not in schema:
        return Any
    names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
    meta = _constraints(schema)

    def bounded(t: Any) -> Any:
        if t is int:  # integer bounds for an int (a bound of 1e9 is 1000000000)
            return Annotated[t, msgspec.Meta(**{k: math.ceil(v) if k == "ge" else math.floor(v)
                                                for k, v in meta.items()})] if meta else t
        return Annotated[t, msgspec.Meta(**meta)] if meta else t

    parts: list[Any] = []
    for n in names:
        if n == "string":
            parts.append(bounded(str))
        elif n in ("integer", "number"):
            parts += [bounded(int), bounded(float)]
        elif n == "boolean":
            parts.append(bool)
        elif n == "null":
            parts.append(None)
        elif n == "array":
            parts.append(bounded(list[_decoded_type(schema.get("items", {}))]))  # type: ignore[misc]
        elif n == "object" and schema.get("additionalProperties") is False:
            parts.append(_struct(name, schema))
        elif n == "object":
            extra = schema.get("additionalProperties")
            parts.append(bounded(dict[str, _decoded_type(extra) if isinstance(extra, dict) else Any]))  # type: ignore[misc]
        else:
            raise ValueError(f"_decoded_type: JSON type {n!r} is not supported")
    return parts[0] if len(parts) == 1 else Union[tuple(parts)]


def _struct(name: str, schema: dict[str, Any]) -> Any:
    """A Struct type of a closed object schema: required fields first, the others ``UNSET``
    when left out (so what a file gives is told from what it leaves out)."""
    props, required = schema["properties"], schema.get("required", ())
    fields: list[Any] = [(k, _decoded_type(s, k)) for k, s in props.items() if k in required]
    fields += [(k, Union[_decoded_type(s, k), msgspec.UnsetType], msgspec.UNSET)
               for k, s in props.items() if k not in required]
    return msgspec.defstruct(name.title().replace("_", ""), fields, forbid_unknown_fields=True, gc=False)


#: format and version are read first (a file of another format, or another version, is told
#: so before its structure is checked), so the decoder takes them as they are
_TOP_DECODED = {**SCHEMA, "required": [k for k in SCHEMA["required"] if k not in ("format", "version")],
                "properties": {**SCHEMA["properties"], "format": {}, "version": {}}}
_DesignFile = _struct("design_file", _TOP_DECODED)
#: the decoded type of each field: top level, components, links (the wording of a problem
#: decodes one field at a time with these)
_FIELD_TYPES: dict[str, dict[str, Any]] = {
    "": {k: _decoded_type(s, k) for k, s in _TOP_DECODED["properties"].items()},
    **{key: {k: _decoded_type(s, k) for k, s in SCHEMA["properties"][key]["items"]["properties"].items()}
       for key in _ITEM_LISTS}}
_ITEM_TYPES = {key: _struct(key[:-1], SCHEMA["properties"][key]["items"]) for key in _ITEM_LISTS}
_WORKLOAD_TYPES = {name: _decoded_type(s) for name, s in _WORKLOAD_PROPERTIES.items()}
_SCENARIO_SCHEMA = SCHEMA["properties"]["scenario"]["properties"]
_SCENARIO_TYPES = {name: _decoded_type(s) for name, s in _SCENARIO_SCHEMA.items()}
_DECODER = msgspec.json.Decoder(_DesignFile)


def published_schema() -> dict[str, Any]:
    """The JSON Schema of a design file as published (``dpu-designer schema``,
    ``resources/schema/dpu-cluster-design.schema.json``): :data:`SCHEMA`, which the decoder is
    made from, with its ``$id`` and a title."""
    return {"$schema": SCHEMA["$schema"], "$id": SCHEMA_ID, "title": "DPU Cluster Designer design file",
            "description": f"format {FORMAT!r}, version {VERSION}",
            **{k: v for k, v in SCHEMA.items() if k != "$schema"}}


def schema_text() -> str:
    """:func:`published_schema` as the file holds it (two-space indent, a final newline)."""
    return json.dumps(published_schema(), indent=2, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------------------ wording
def _printable(text: str) -> str:
    """``text`` with unpaired surrogates written as ``\\udXXX``, so a message can always be shown."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _json_path(parts: tuple[Any, ...] | list[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{_printable(p)}" if out else _printable(p))
    return out


_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string", "object": "an object {...}",
               "array": "a list [...]", "boolean": "true or false", "null": "null"}
_PROBLEM = re.compile(r"(?s)(.*?)(?: - at `\$((?:\.[A-Za-z_][A-Za-z_0-9]*|\[\d+\])*)`)?")
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z_0-9]*)|\[(\d+)\]")
_BOUND = re.compile(r"Expected `(\w+)`( of length)? (>=|>|<=) ")


def _problem(exc: msgspec.ValidationError, where: tuple[Any, ...], schema: dict[str, Any],
             value: Any) -> tuple[tuple[Any, ...], str]:
    """The path and message of the problem msgspec found decoding ``value`` (at ``where``, of
    ``schema``), in the words of this program's messages ("must be an integer", "missing field
    'model'"...): the kind of problem from msgspec, the allowed values and bounds from the schema."""
    m = _PROBLEM.fullmatch(str(exc))
    what, at = (m.group(1), m.group(2) or "") if m else (str(exc), "")
    for step in _STEP.finditer(at):
        key = step.group(1) if step.group(1) is not None else int(step.group(2))
        where += (key,)
        if isinstance(key, int):
            schema = schema.get("items", {})
        else:
            schema = schema.get("properties", {}).get(key, {})
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            value = None
    if what.startswith("Object missing required field `"):
        return where, f"missing field '{what.split('`')[1]}'"
    if what.startswith("Object contains unknown field `"):
        return where, f"unknown field '{_printable(what.split('`', 1)[1].rsplit('`', 1)[0])}'"
    return where, _value_message(what, where, schema, value)


def _value_message(what: str, where: tuple[Any, ...], schema: dict[str, Any], value: Any) -> str:
    if "enum" in schema:
        return "must be one of " + ", ".join(str(v) for v in schema["enum"])
    bound = _BOUND.match(what)
    if bound is None:  # a value of another type
        named = schema.get("type", [])
        return "must be " + " or ".join(_TYPE_WORDS.get(n, n) for n in ([named] if isinstance(named, str) else named))
    sized, op = bound.group(2), bound.group(3)
    if sized and bound.group(1) == "str":
        return "must not be empty" if op == ">=" else f"{value!r} is too long"
    if sized:
        if op == ">=" and schema.get("maxItems") == 2:
            return "must be a list of two numbers [x, y]"
        return f"holds more than {schema['maxItems']} entries (the limit of this program)"
    zero = _zero_meaning(where)
    if op == ">=":
        return f"must be at least {number_text(schema['minimum'])}{zero}"
    if op == ">":
        return f"must be above {number_text(schema['exclusiveMinimum'])}{zero}"
    return f"must be at most {number_text(schema['maximum'])}{zero}"


def _zero_meaning(where: tuple[Any, ...]) -> str:
    """" (0: no checkpoints)" for a scenario setting where 0 has a meaning."""
    spec = SCENARIO_SPEC.get(where[1]) if len(where) == 2 and where[0] == "scenario" else None
    return f" (0: {spec.zero})" if spec is not None and spec.zero else ""


def _convert_problems(value: Any, type_: Any, where: tuple[Any, ...],
                      schema: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """The worded problems of decoding one value with its type: a fraction where an integer goes
    first, then what msgspec finds (an object of values of one schema, such as the id counters,
    key by key: msgspec does not name a key)."""
    found = [p] if (p := _integral(value, where, schema)) else []
    try:
        msgspec.convert(value, type_)
    except UnicodeEncodeError:  # a lone surrogate held against a list of names (msgspec encodes it)
        found.append((where, _value_message("", where, schema, value)))
    except msgspec.ValidationError as exc:
        each = schema.get("additionalProperties")
        if type(value) is dict and isinstance(each, dict):
            inner = _decoded_type(each)
            found += [p for k, v in value.items() for p in _convert_problems(v, inner, where + (k,), each)]
        elif type(value) is list and "items" in schema:  # (its length and each value: all problems)
            if len(value) < schema.get("minItems", 0):
                found.append((where, _value_message("Expected `array` of length >= ", where, schema, value)))
            if len(value) > schema.get("maxItems", len(value)):
                found.append((where, _value_message("Expected `array` of length <= ", where, schema, value)))
            inner = _decoded_type(schema["items"])
            found += [p for j, v in enumerate(value) for p in _convert_problems(v, inner, where + (j,), schema["items"])]
        else:
            found.append(_problem(exc, where, schema, value))
    return found


def _integral(value: Any, where: tuple[Any, ...], schema: dict[str, Any]) -> tuple[tuple[Any, ...], str] | None:
    """JSON Schema's integers: a float counts when it has no fraction (2.0), else the problem."""
    named = schema.get("type")
    if type(value) is float and (named == "integer" or isinstance(named, list) and "integer" in named) \
            and not value.is_integer():
        return where, _value_message("", where, schema, value)
    return None


def workload_problem(name: str, value: Any) -> str | None:
    """None, or why a design file cannot hold ``value`` as the workload setting ``name`` (the
    check loading does; ``--set workload.NAME=VALUE`` uses it too)."""
    if name not in _WORKLOAD_TYPES:
        return None
    found = _convert_problems(value, _WORKLOAD_TYPES[name], ("workload", name), _WORKLOAD_PROPERTIES[name])
    return found[0][1] if found else None


def _structure_problems(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """What a document that does not decode gets wrong, field by field: each field decoded with
    its own type (the decoder's, so a document decodes exactly when this finds nothing), the
    first :data:`_EXPLAINED_ITEMS` failing items of each list in full, the rest counted."""
    top = SCHEMA["properties"]
    found: list[tuple[tuple[Any, ...], str]] = [((), f"missing field '{k}'") for k in _TOP_DECODED["required"]
                                                if k not in data]
    found += [((), f"unknown field '{_printable(str(k))}'") for k in data if k not in top]
    for key, value in data.items():
        if key not in top or key in ("format", "version"):
            continue
        if key in _ITEM_LISTS and type(value) is list:
            if len(value) > top[key]["maxItems"]:
                found.append(((key,), _value_message("Expected `array` of length <= ", (key,), top[key], value)))
                continue
            found += _item_problems(key, value)
        else:
            found += _convert_problems(value, _FIELD_TYPES[""][key], (key,), top[key])
    found += _head_problems(data, counters=False)
    return found


def _item_problems(key: str, items: list[Any]) -> list[tuple[tuple[Any, ...], str]]:
    schema = SCHEMA["properties"][key]["items"]
    types, struct = _FIELD_TYPES[key], _ITEM_TYPES[key]
    found: list[tuple[tuple[Any, ...], str]] = []
    explained = unexplained = 0
    for i, item in enumerate(items):
        try:
            msgspec.convert(item, struct)
            fractions = [p for name in _INTEGER_FIELDS & item.keys()
                         if (p := _integral(item[name], (key, i, name), schema["properties"][name]))]
            if not fractions:
                continue
            if explained == _EXPLAINED_ITEMS:
                unexplained += 1
            else:
                explained += 1
                found += fractions
            continue
        except (msgspec.ValidationError, UnicodeEncodeError) as exc:
            if explained == _EXPLAINED_ITEMS:
                unexplained += 1
                continue
            explained += 1
            if type(item) is not dict and isinstance(exc, msgspec.ValidationError):
                found.append(_problem(exc, (key, i), schema, item))
                continue
        found += [((key, i), f"missing field '{k}'") for k in schema["required"] if k not in item]
        found += [((key, i), f"unknown field '{_printable(str(k))}'") for k in item if k not in types]
        for name, value in item.items():
            if name in types:
                found += _convert_problems(value, types[name], (key, i, name), schema["properties"][name])
    if unexplained:
        found.append(((key,), f"{unexplained} more entries do not match the file format either"))
    return found


def _head_problems(data: dict[str, Any], counters: bool = True) -> list[tuple[tuple[Any, ...], str]]:
    """The workload and scenario settings a file gives, each decoded with its own type (the two
    objects admit other keys, so the decoder takes them whole), and (``counters``) the id
    counters given as floats with a fraction."""
    found = []
    for key, types, schemas in (("workload", _WORKLOAD_TYPES, _WORKLOAD_PROPERTIES),
                                ("scenario", _SCENARIO_TYPES, _SCENARIO_SCHEMA)):
        values = data.get(key)
        if type(values) is dict:
            for name, value in values.items():
                if name in types:
                    wrong = _convert_problems(value, types[name], (key, name), schemas[name])
                    found += wrong
                    if key == "scenario" and not wrong and getattr(SCENARIO_SPEC.get(name), "least", None):
                        # a gap the JSON Schema cannot state ("0 or from 64"): the setting's own rule
                        found += [((key, name), p) for _, p in scenario_problems({name: value})]
    given = data.get("id_counters")
    if counters and type(given) is dict:
        schema = SCHEMA["properties"]["id_counters"]["additionalProperties"]
        found += [p for k, v in given.items() if (p := _integral(v, ("id_counters", k), schema))]
    return found


def _in_order(found: list[tuple[tuple[Any, ...], str]]) -> list[tuple[str, str]]:
    """Problems in document order (an index before a field name at the same depth), as paths."""
    found.sort(key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in e[0]])
    return [(_json_path(path), msg) for path, msg in found]


# ------------------------------------------------------------------------- values (the tree)
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
    marked.twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
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


def _check_tree(data: Any, where: tuple[Any, ...] = ()) -> list[tuple[str, str]]:
    """The value problems of a JSON tree (:func:`_leaf_problem`, a key given twice, nesting deeper
    than :data:`MAX_DEPTH`), each with its JSON path, sorted; ``where``: the tree's own path
    (its depth counts). Walked without recursion, so deep nesting cannot exhaust the stack."""
    errors: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, where)]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, (dict, list)):
            problem = _leaf_problem(node)
            if problem:
                errors.append((_json_path(path), problem))
            continue
        if len(path) >= MAX_DEPTH:
            errors.append((_json_path(path), f"nested more than {MAX_DEPTH} levels deep"))
            continue
        if isinstance(node, _DuplicateKeys):
            errors.append((_json_path(path), f"the field '{_printable(node.twice)}' is given twice"))
        if isinstance(node, dict):
            errors.extend((_json_path(path + (k,)), "field name " + str(_leaf_problem(k)))
                          for k in node if _leaf_problem(k))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((v, path + (k,)) for k, v in items)
    return sorted(errors)


def _sound_strings(col: list[Any]) -> bool:
    """Every string of a column can be saved as UTF-8 (one join, one check)."""
    text = "".join(col)
    return text.isascii() or _leaf_problem(text) is None


def _within_max_int(col: list[Any]) -> bool:
    """Every number of a column of finite ints and floats is within ±MAX_INT (so is every int;
    a float that large is allowed, and looked at again by :func:`_sound_numbers`)."""
    return not col or min(col) >= -MAX_INT and max(col) <= MAX_INT or _sound_numbers(col)


def _sound_numbers(col: list[Any]) -> bool:
    """Every number of a column (ints and floats) is finite and its integers within ±MAX_INT
    (the integers are bounded first: ``math.isfinite`` of a 400-digit integer raises
    OverflowError). Floats: their sum is finite when every one is (NaN and infinity carry
    through a sum; a finite sum that overflows is looked at value by value)."""
    if not col:
        return True
    types = set(map(type, col))
    if types == {int}:
        return cast(bool, min(col) >= -MAX_INT and max(col) <= MAX_INT)
    if types == {float}:
        return math.isfinite(sum(col)) or all(map(math.isfinite, col))
    return all(-MAX_INT <= v <= MAX_INT if type(v) is int else math.isfinite(v) for v in col)


# --------------------------------------------------------------------------- loading
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


def from_dict(data: Any, source: str = "<file>") -> Design:
    """Check a parsed design file and build the :class:`Design`; raises :class:`DesignFileError`.

    The same path as :func:`load`: the document is decoded into the file's Struct types
    (:func:`msgspec.convert`), then :func:`_built` checks what the types do not say and builds."""
    with collector_paused():
        if not isinstance(data, dict):
            raise DesignFileError(source, [("", "not a design file (the top level must be a JSON object)")])
        if data.get("format") != FORMAT:
            raise DesignFileError(source, [("format", f"not a design file (expected \"format\": \"{FORMAT}\")")])
        try:
            data = _migrate(data, source)
        except DesignFileError:  # (the values are looked at first, as ever)
            errors = _check_tree(data)
            if errors:
                raise DesignFileError(source, errors) from None
            raise
        try:
            decoded = msgspec.convert(data, _DesignFile)
        except (msgspec.ValidationError, UnicodeEncodeError):
            raise DesignFileError(source, _check_tree(data) or _in_order(_structure_problems(data))
                                  or [("", "does not match the file format")]) from None
        return _built(decoded, _columns(decoded), source)


def loads(text: str | bytes, source: str = "<file>") -> Design:
    """Read design-file text or its UTF-8 bytes (see :func:`load`)."""
    if isinstance(text, str):  # (a lone surrogate in the text is refused as the loader refuses it in a file)
        return _decoded(text.encode("utf-8", "surrogatepass"), source, text)
    return _decoded(text, source)


def _decoded(raw: bytes, source: str, text: str | None = None) -> Design:
    """The one way a file's bytes become a design: msgspec decodes them into the file's Struct
    types (JSON syntax, types, bounds, required and unknown fields in one pass, in C), the
    text's members are counted against the decoded ones (:func:`_text_members`: a key given
    twice is the only way they differ), and :func:`_built` checks the rest and builds. A file
    that fails any of it is read again by :func:`_parse` only to word what is wrong, where
    (``text``: the text ``raw`` was encoded from, when it was given as text)."""
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    with collector_paused():
        try:
            decoded = _DECODER.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise _refusal(text if text is not None else raw, source, exc) from None
        if decoded.format != FORMAT or decoded.version != VERSION or type(decoded.version) is not int:
            del decoded
            return from_dict(_parse(text if text is not None else raw, source), source)
        columns = _columns(decoded)
        if _text_members(raw) != _decoded_members(decoded, columns[2]):
            raise _refusal(text if text is not None else raw, source, None)
        del raw  # (66 MB at 131k GPUs) gone before the objects are made
        decoded.components.clear()  # (their values live on in the columns)
        decoded.links.clear()
        return _built(decoded, columns, source, text=True)


def _refusal(raw: bytes | str, source: str, exc: Exception | None) -> DesignFileError:
    """The message for bytes the decoder refused (``exc``) or that hold a key twice (None): the
    text is read again by :func:`_parse`, which words a syntax error with its line and column,
    then the document's problems are found with their paths (:func:`from_dict`)."""
    try:
        from_dict(_parse(raw, source), source)
    except DesignFileError as err:
        return err
    return DesignFileError(source, [("", f"cannot be read: {exc}" if exc is not None else "cannot be read")])


def _parse(raw: bytes | str, source: str) -> Any:
    """The document of a text as :mod:`json` reads it, refused with the problems
    :func:`_check_tree` finds (a key given twice and NaN/Infinity are marked while parsing,
    :class:`_DuplicateKeys`, :class:`_NonFinite`, so that it can say where): only ever used to
    word what is wrong with a file."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise DesignFileError(source, [("", f"not a text (UTF-8) file (byte {exc.start})")]) from None
    try:
        data = json.loads(text, parse_constant=_NonFinite, object_pairs_hook=_object)
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
    if isinstance(data, dict) and data.get("format") == FORMAT:  # (else from_dict says what it is not)
        errors = _check_tree(data)
        if errors:
            raise DesignFileError(source, errors)
    return data


def _text_members(raw: bytes) -> int:
    """How many key/value pairs (members) the JSON text holds: each has its ':' outside every
    string (RFC 8259 §4), and a ':' is inside a string exactly when an odd number of unescaped
    quotes comes before it (a quote is escaped when an odd run of backslashes comes before it;
    most files hold no backslash at all). Found with numpy, 1 MiB at a time: the quotes and
    colons of a piece in one array, a running count of the quotes."""
    import numpy as np

    codes, step = np.frombuffer(raw, np.uint8), 1 << 20
    escapes = raw.find(b"\\") >= 0
    members = quotes_before = 0
    for start in range(0, len(codes), step):
        piece = codes[start:start + step]
        at = np.flatnonzero((piece == 34) | (piece == 58))
        quote = piece[at] == 34
        if escapes:
            quote[quote] = ~_escaped(codes, at[quote] + start)
        outside = (np.cumsum(quote, dtype=np.int64) + quotes_before) & 1 == 0
        members += int(np.count_nonzero(outside & (piece[at] == 58)))
        quotes_before += int(np.count_nonzero(quote))
    return members


def _escaped(codes: Any, at: Any) -> Any:
    """Whether each quote at ``at`` follows an odd run of backslashes."""
    import numpy as np

    odd = np.zeros(len(at), bool)
    back = at - 1
    run = back >= 0
    run[run] = codes[back[run]] == 92
    while run.any():
        odd ^= run
        back = back - 1
        run &= back >= 0
        run[run] = codes[back[run]] == 92
    return odd


def _members(node: Any) -> int:
    """The key/value pairs of a decoded JSON value (walked without recursion)."""
    count, stack = 0, [node]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            count += len(node)
            stack += [v for v in node.values() if type(v) is dict or type(v) is list]
        elif type(node) is list:
            stack += [v for v in node if type(v) is dict or type(v) is list]
    return count


_COMPONENT_REQUIRED = tuple(SCHEMA["properties"]["components"]["items"]["required"])
_LINK_REQUIRED = tuple(SCHEMA["properties"]["links"]["items"]["required"])
_COMPONENT_OPTIONAL = tuple(k for k in SCHEMA["properties"]["components"]["items"]["properties"]
                            if k not in _COMPONENT_REQUIRED)
_LINK_OPTIONAL = tuple(k for k in SCHEMA["properties"]["links"]["items"]["properties"] if k not in _LINK_REQUIRED)
#: the value the model takes for an optional field a file leaves out
_DEFAULTS = {"name": "", "parent": None, "slot": None, "props": None, "pos": None,
             "latency_us": 0.0, "lanes": 1, "a_port": None, "b_port": None}
assert set(_DEFAULTS) == set(_COMPONENT_OPTIONAL) | set(_LINK_OPTIONAL)
_INTEGER_FIELDS = {"slot", "lanes", "a_port", "b_port"}


def _columns(decoded: Any) -> tuple[dict[str, list[Any]], dict[str, list[Any]], int, set[str]]:
    """The fields of the components and of the links as columns (one C pass each), the model's
    default where an item leaves a field out, and how many fields the items give (with every
    props object's members: see :func:`_decoded_members`), and the optional fields some item
    gives (``components.slot``...: a column of defaults needs no checks)."""
    given = 0
    out = []
    written: set[str] = set()
    for key in _ITEM_LISTS:
        items = decoded.components if key == "components" else decoded.links
        n = len(items)
        cols = {}
        for name in SCHEMA["properties"][key]["items"]["properties"]:
            col = list(map(attrgetter(name), items))
            if name in _DEFAULTS:
                left_out = col.count(msgspec.UNSET)
                given += n - left_out
                if left_out < n:
                    written.add(f"{key}.{name}")
                if left_out == n:
                    col = [_DEFAULTS[name]] * n
                elif left_out and name in ("props", "pos"):  # (unhashable values)
                    col = [_DEFAULTS[name] if v is msgspec.UNSET else v for v in col]
                elif left_out:
                    col = list(map({msgspec.UNSET: _DEFAULTS[name]}.get, col, col))
            else:
                given += n
            cols[name] = col
        out.append(cols)
    c, l = out
    return c, l, given + _members(_given(c["props"])), written


def _decoded_members(decoded: Any, given: int) -> int:
    """The members of the decoded document, ``given`` those of its items (:func:`_columns`): a
    key given twice is kept once, so with every key the file gives known to the decoder
    (unknown ones are refused) this is :func:`_text_members` exactly when no key is given twice."""
    head = [getattr(decoded, k) for k in _DesignFile.__struct_fields__ if k not in _ITEM_LISTS]
    return sum(v is not msgspec.UNSET for v in head) + len(_ITEM_LISTS) + _members(head) + given


def _built(decoded: Any, columns: tuple[dict[str, list[Any]], dict[str, list[Any]], int, set[str]],
           source: str, text: bool = False) -> Design:
    """The design of a decoded document, after the checks its types do not make, by columns
    (a set of types, a min and a max, a spec check per distinct value), each problem worded
    with its path; in the order of the old item-by-item checks: values first (:func:`_check_tree`'s
    problems), then structure (integers given with a fraction, the workload and scenario
    settings), then meaning (ids, link ends, parents, props fields)."""
    c, l, _, written = columns
    head = {k: getattr(decoded, k) for k in _DesignFile.__struct_fields__
            if k not in _ITEM_LISTS and getattr(decoded, k) is not msgspec.UNSET}
    errors = _value_problems(head, c, l, written, text)
    if errors:
        raise DesignFileError(source, errors)
    found = _head_problems(head)
    for key, cols in (("components", c), ("links", l)):
        for name in _INTEGER_FIELDS & cols.keys():
            col = cols[name]
            if float in set(map(type, col)):
                schema = SCHEMA["properties"][key]["items"]["properties"][name]
                found += [p for i, v in enumerate(col) if (p := _integral(v, (key, i, name), schema))]
                cols[name] = [_int(v) for v in col]
    if found:
        raise DesignFileError(source, _in_order(found))
    props = _meaning_problems(c, l, written, source)
    ids = (c["id"], l["id"])
    pos = c["pos"]
    pos = [(p[0], p[1]) if p is not None else None for p in pos] if None in pos else list(map(tuple, pos))
    del decoded, columns
    built = list(map(Component, c["id"], c["kind"], c["model"], c["name"], c["parent"], c["slot"], props, pos))
    wired = list(map(Link, l["id"], l["a"], l["b"], l["medium"], l["speed_Gbps"], l["latency_us"],
                     l["lanes"], l["a_port"], l["b_port"]))
    counters = head.get("id_counters", {})
    topo = Topology.from_items(built, wired, {k: _int(v) for k, v in counters.items()}, ids=ids)
    scenario = {k: _int(v) if k in SCENARIO_SPEC and SCENARIO_SPEC[k].type is int else v
                for k, v in head.get("scenario", {}).items()}
    return Design(topo, head["name"], head.get("workload"), scenario, head.get("meta"))


def _int(value: Any) -> Any:
    """JSON Schema counts 2.0 as an integer; the model (and Qt's spin boxes) want an int."""
    return int(value) if type(value) is float else value


def _value_problems(head: dict[str, Any], c: dict[str, list[Any]], l: dict[str, list[Any]], written: set[str],
                    text: bool) -> list[tuple[str, str]]:
    """:func:`_check_tree`'s problems, by columns for the items: every string UTF-8 can hold,
    every number finite and its integers within ±MAX_INT, props nested no deeper than
    :data:`MAX_DEPTH` (the head is walked: it is small). Only the columns some item writes are
    looked at (the model's defaults are sound), positions not at all (their types bound them
    to ±MAX_COORD), and for a document decoded from ``text`` no string and no float either:
    msgspec's JSON decoder refuses a lone surrogate and a number beyond the float range."""
    errors = _check_tree(head)
    for key, cols, strings, numbers in (
            ("components", c, ("id", "model", "name", "parent"), ("slot",)),
            ("links", l, ("id", "a", "b"), ("speed_Gbps", "latency_us", "lanes", "a_port", "b_port"))):
        for name in () if text else strings:
            if name in _DEFAULTS and f"{key}.{name}" not in written:
                continue
            if not _sound_strings(_given(cols[name])):
                errors += [(_json_path((key, i, name)), p) for i, v in enumerate(cols[name])
                           if v is not None and (p := _leaf_problem(v))]
        for name in numbers:
            if name in _DEFAULTS and f"{key}.{name}" not in written:
                continue
            col = _given(cols[name])
            if not (_within_max_int(col) if text else _sound_numbers(col)):
                errors += [(_json_path((key, i, name)), p) for i, v in enumerate(cols[name])
                           if (p := _leaf_problem(v))]
    props = c["props"]
    given = [p for p in props if p]
    values = [v for p in given for v in p.values()]
    if not (_sound_strings([k for p in given for k in p]) and _sound_strings([v for v in values if type(v) is str])
            and _sound_numbers([v for v in values if type(v) is int or type(v) is float])
            and set(map(type, values)) <= {str, int, float, bool, type(None)}):
        for i, p in enumerate(props):
            if p:
                errors += _check_tree(p, ("components", i, "props"))
    return sorted(errors)


def _meaning_problems(c: dict[str, list[Any]], l: dict[str, list[Any]], written: set[str],
                      source: str) -> list[dict[str, Any]]:
    """The checks of meaning, by columns: ids unique over components and links, every props field
    one its kind has with a value its spec allows, link ends that name a component and differ,
    link figures their specs allow, parents of the right kind (which rules out placement loops);
    raises with the problems in the order of the items, else gives each component's props."""
    found: list[tuple[tuple[int, int, int], str, str]] = []  # (section, item, order), path, message
    ids, kinds, lids = c["id"], c["kind"], l["id"]
    n = len(ids)
    kind_of = dict(zip(ids, kinds))
    if len(kind_of) != n or len(kind_of.keys() | lids) != n + len(lids):
        first: dict[str, str] = {}
        for section, key, col in ((0, "components", ids), (1, "links", lids)):
            for i, x in enumerate(col):
                where = first.setdefault(x, f"{key}[{i}]")
                if where != f"{key}[{i}]":
                    found.append(((section, i, 0), f"{key}[{i}].id", f"duplicate id '{x}' (also {where})"))
        kind_of = {}
        for x, k in zip(ids, kinds):
            kind_of.setdefault(x, k)
    props, prop_found = _props_checked(kinds, c["props"])
    found += prop_found
    for order, end in ((1, "a"), (2, "b")):
        col = l[end]
        unknown = () if all(map(kind_of.__contains__, col)) else set(col) - kind_of.keys()
        if unknown:
            found += [((1, i, order), f"links[{i}].{end}", f"names no component '{x}'")
                      for i, x in enumerate(col) if x in unknown]
    if any(map(operator.eq, l["a"], l["b"])):
        found += [((1, i, 3), f"links[{i}].b", f"joins '{a}' to itself")
                  for i, (a, b) in enumerate(zip(l["a"], l["b"])) if a == b]
    for order, name in ((4, "speed_Gbps"), (5, "latency_us"), (6, "lanes")):
        if name in _DEFAULTS and f"links.{name}" not in written:
            continue  # (the model's default passes its spec)
        spec, col = _LINK_SPECS[name], l[name]
        distinct = set(zip(map(type, col), col)) if len(set(map(type, col))) > 1 else {(type(v), v) for v in set(col)}
        bad = {(t, v) for t, v in distinct if spec.check(v)}
        if bad:
            found += [((1, i, order), f"links[{i}].{name}", str(spec.check(v)))
                      for i, v in enumerate(col) if (type(v), v) in bad]
    parents = c["parent"]
    parent_kinds = list(map(kind_of.get, parents))
    wrong = {(kind, up) for kind, up in set(zip(kinds, parent_kinds)) if up is not None and parent_problem(kind, up)}
    if wrong or parent_kinds.count(None) != parents.count(None):
        for i, (kind, parent, parent_kind) in enumerate(zip(kinds, parents, parent_kinds)):
            if parent is not None and parent_kind is None:
                found.append(((2, i, 0), f"components[{i}].parent", f"names no component '{parent}'"))
            elif parent_kind is not None and (kind, parent_kind) in wrong:
                found.append(((2, i, 0), f"components[{i}].parent", str(parent_problem(kind, parent_kind))))
        if wrong:
            found += _loops(ids, parents, kind_of)
    if found:
        found.sort(key=itemgetter(0))
        raise DesignFileError(source, [(path, msg) for _, path, msg in found])
    return props


def _loops(ids: list[str], parents: list[Any], kind_of: dict[str, str]) -> list[tuple[tuple[int, int, int], str, str]]:
    """Placement loops (only possible when some parent is of the wrong kind), one error per loop at
    its first member: ``validation.placement_loops``' linear walk (a 30,000-deep chain is 30,000
    steps, not 30,000 walks of it), the same loops the design check reports."""
    from designer.topology.validation import placement_loops

    index = {x: i for i, x in enumerate(ids)}
    up = {x: p for x, p in zip(ids, parents) if p is not None and p in kind_of}
    return [((3, index[c[0]], 0), f"components[{index[c[0]]}].parent",
             "placement loops: " + " -> ".join(c + [c[0]])) for c in placement_loops(up)]


def _props_checked(kinds: list[str], col: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Each component's props (a new dict each, integers given as 2.0 made ints) and the problems
    of their fields. Each distinct props object (with its kind and its values' types: 1, 1.0 and
    true are told apart) is checked once: the switches of a big design repeat a handful."""
    props: list[dict[str, Any]] = [{} for _ in col]
    found: list[Any] = []
    seen: dict[Any, tuple[frozenset[str], list[tuple[str, str]]]] = {}
    for i, values in enumerate(col):
        if not values:
            continue
        try:
            key: Any = (kinds[i], *values.items(), *map(type, values.values()))
            verdict = seen.get(key)
        except TypeError:  # a list or an object as a value
            key, verdict = None, None
        if verdict is None:
            verdict = _props_verdict(kinds[i], values)
            if key is not None:
                seen[key] = verdict
        fix, problems = verdict
        found += [((0, i, 1 + j), f"components[{i}].props.{name}", msg) for j, (name, msg) in enumerate(problems)]
        props[i] = {k: _int(v) if k in fix else v for k, v in values.items()} if fix else dict(values)
    return props, found


def _props_verdict(kind: str, values: dict[str, Any]) -> tuple[frozenset[str], list[tuple[str, str]]]:
    """The fields whose value becomes an int (a float given to an integer field) and the problems
    of a props object of a ``kind`` (a field the kind does not have, a value its spec refuses)."""
    specs = _FIELD_SPECS[kind]
    fix, problems = [], []
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None:
            problems.append((name, f"a {kind} has no field '{name}' (known: {', '.join(specs)})"))
            continue
        msg = spec.check(value)
        if msg:
            problems.append((name, msg))
        elif spec.type == "int" and type(value) is float:
            fix.append(name)
    return frozenset(fix), problems


# ------------------------------------------------------------------------------ saving
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


def _given(col: list[Any]) -> list[Any]:
    """The values of an optional column that are not None (the fields an item writes)."""
    return [v for v in col if v is not None] if None in col else col


def dumps(design: Design, source: str = "<design>") -> str:
    """The file text: one component or link per line, so files diff well and stay compact.

    It is the text of :func:`to_dict` as json's C encoder writes it (``ensure_ascii=False``), one
    item a line, written from the items' columns (:func:`_field_texts`: each field left out
    exactly when :func:`to_dict` leaves it out, in its order) with no dict per item. A value that
    the loader would refuse (NaN, a huge integer, a broken string, deep nesting) or that is not
    JSON at all is refused here, with its path, so that no saved file fails to load."""
    topo = design.topology
    items: dict[str, list[Any]] = {"components": list(topo.components.values()), "links": list(topo.links.values())}
    for key, limit in (("components", MAX_COMPONENTS), ("links", MAX_LINKS)):
        if len(items[key]) > limit:
            raise DesignFileError(source, [(key, (
                f"cannot be saved: {len(items[key]):,} {key}; this program reads design files "
                f"of up to {limit:,} {key}"))])
    encode = _item_encoder()
    try:
        head = _head_dict(design)
        errors = _check_tree(head)
        failed: list[tuple[tuple[int, int, int], Exception]] = []
        fields = {key: [_field_texts(key, name, list(map(attrgetter(name), items[key])), encode, errors, failed)
                        for name in _WRITTEN[key]] for key in _ITEM_LISTS}
        if failed:  # what to_dict would raise: the first item's (in the file's order)
            raise min(failed, key=itemgetter(0))[1]
        if errors:
            raise DesignFileError(source, [(p, f"cannot be saved: {m}") for p, m in sorted(errors)])
        lines = ["{"] + [f" {json.dumps(key)}: {encode(value)}," for key, value in head.items()]
        for key in _ITEM_LISTS:
            cols = [_encoded(col, encode) for col in fields[key] if col is not None]
            body = "},\n  {".join(map("".join, zip(*cols)))
            lines.append(f' "{key}": [\n  {{{body}}}\n ]' if items[key] else f' "{key}": []')
        lines[-2] += ","
        lines.append("}")
    except (TypeError, ValueError) as exc:  # a value that is not JSON (a set, a numpy integer...)
        raise DesignFileError(source, [("", f"cannot be saved: {exc}")]) from None
    return "\n".join(lines) + "\n"


#: the fields an item writes, in :func:`to_dict`'s order, with what the value is ("str",
#: "number", "props", "pos") and when the field is left out (never, its value None, falsy, 1)
_WRITTEN = {
    "components": {"id": ("str", None), "kind": ("str", None), "model": ("str", None), "name": ("str", "falsy"),
                   "parent": ("str", "none"), "slot": ("number", "none"), "props": ("props", "falsy"),
                   "pos": ("pos", "none")},
    "links": {"id": ("str", None), "a": ("str", None), "b": ("str", None), "medium": ("str", None),
              "speed_Gbps": ("number", None), "latency_us": ("number", "falsy"), "lanes": ("number", "one"),
              "a_port": ("number", "none"), "b_port": ("number", "none")}}
#: marks an item that leaves a field out (in a column still to be encoded)
_LEFT_OUT = object()


def _kept(omit: str | None, v: Any) -> bool:
    return omit is None or (v is not None if omit == "none" else bool(v) if omit == "falsy" else v != 1)


class _Values(list):
    """A column of values still to be encoded (after ``prefix``; :data:`_LEFT_OUT` where an item
    leaves the field out)."""

    prefix = ""


def _field_texts(key: str, name: str, col: list[Any], encode: Callable[[Any], str],
                 errors: list[tuple[str, str]], failed: list[tuple[tuple[int, int, int], Exception]]) -> Iterable[Any] | None:
    """The text of one field of every item ("" where the item leaves it out; an iterator, so
    that the texts of one item at a time are held), or None when no item writes it. A column of plain values (exact ``str``, ``int``/``float`` within the
    loader's limits, 2-tuples of numbers, props of sound scalars) is written in C loops (one
    ``repr`` or string encoding per value, per distinct value for strings); any other value is
    looked at on its own: :func:`_check_tree` adds its problems to ``errors`` and it is left for
    :func:`_encoded` (json's encoder) as :func:`to_dict` holds it; what :func:`to_dict` would
    raise on it (a value with no truth value, props that are no mapping) goes to ``failed``."""
    what, omit = _WRITTEN[key][name]
    prefix = f'"{name}": ' if name == "id" else f', "{name}": '
    try:
        given = col if omit is None else _given(col) if omit == "none" else [v for v in col if _kept(omit, v)]
        if what == "str":
            plain = _saved_strings(given)
        elif what == "number":
            plain = _saved_numbers(given)
        elif what == "pos":
            plain = set(map(type, given)) <= {tuple} and set(map(len, given)) <= {2} \
                and _saved_numbers(list(chain.from_iterable(given)))
        else:
            plain = set(map(type, given)) <= {dict} and _props_sound(given)
    except (TypeError, ValueError):  # a value with no truth value or no type the checks know
        plain = False
    if plain:
        if not given:
            return None
        enc = json.encoder.encode_basestring
        if what == "str":
            if omit is None and name in ("id", "a", "b"):  # (distinct values: no table)
                return map(prefix.__add__, map(enc, col))
            table = {v: prefix + enc(v) for v in set(given)}
            if omit == "falsy":
                return (table[v] if v else "" for v in col)
            table[None] = ""  # (left out: None)
            return map(table.__getitem__, col)
        if what == "number":
            if len(given) == len(col):
                return map(prefix.__add__, map(repr, col))
            return (prefix + repr(v) if _kept(omit, v) else "" for v in col)
        if what == "pos":
            template = prefix + "[%r, %r]"
            if len(given) == len(col):
                return map(operator.mod, repeat(template), col)
            return (template % v if v is not None else "" for v in col)
        return (prefix + encode(v) if v else "" for v in col)
    out = _Values()
    out.prefix = prefix
    order = (_ITEM_LISTS.index(key), list(_WRITTEN[key]).index(name))
    for i, v in enumerate(col):
        try:
            if not _kept(omit, v):
                out.append(_LEFT_OUT)
                continue
            value = dict(v) if what == "props" else [v[0], v[1]] if what == "pos" else v
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            failed.append(((order[0], i, order[1]), exc))
            out.append(_LEFT_OUT)
            continue
        errors += _check_tree(value, (key, i, name))
        out.append(value)
    return out


def _encoded(col: Iterable[Any], encode: Callable[[Any], str]) -> Iterable[str]:
    """A column of :func:`_field_texts`: its texts, or its values encoded (after its prefix)."""
    if type(col) is not _Values:
        return col
    prefix = col.prefix
    return ("" if v is _LEFT_OUT else prefix + encode(v) for v in col)


def _props_sound(given: list[dict[str, Any]]) -> bool:
    """What :func:`_check_tree` asks of the props objects (at their depth in the file), proved by
    columns when every value is a scalar: string keys and values that UTF-8 can hold, numbers
    finite and integers within ±MAX_INT (nested values are walked)."""
    values = list(chain.from_iterable(map(dict.values, given)))
    types = set(map(type, values))
    if not types <= {str, int, float, bool, type(None)}:
        return not _check_tree(given, ("components", 0))  # nested values: walked (props sit 3 levels deep)
    keys = list(chain.from_iterable(given))
    return (_saved_strings(keys) and _saved_strings([v for v in values if type(v) is str])
            and _sound_numbers([v for v in values if type(v) is int or type(v) is float]))


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
    return not col or (set(map(type, col)) <= {int, float} and _sound_numbers(col))


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
    return _decoded(raw, source)


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
    from designer.safeio import atomic_write_bytes, check_output_path

    def refused(exc: UsageError) -> DesignFileError:
        err = DesignFileError(str(path), [("", str(exc))])
        err.args = (str(exc),)  # the message names the file already
        return err

    try:
        check_output_path(path, inputs=inputs, what="design file")
    except DesignFileError:
        raise
    except UsageError as exc:
        raise refused(exc) from None
    data = dumps(design, str(path)).encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise DesignFileError(str(path), [("", (
            f"cannot be saved: the file would be {len(data) / 2**20:.1f} MiB and this program reads "
            f"design files up to {MAX_FILE_BYTES // 2**20} MiB; make the design smaller"))])
    try:  # safeio's one atomic write: temporary, fsync, rename, folder fsync; "-" is stdout
        atomic_write_bytes(path, data, inputs=inputs, what="design file")
    except DesignFileError:
        raise
    except UsageError as exc:
        raise refused(exc) from None
    except OSError as exc:
        raise DesignFileError(str(path), [("", f"cannot save: {exc.strerror or exc}")]) from None


