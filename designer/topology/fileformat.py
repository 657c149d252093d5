"""Design files: JSON that holds the topology, canvas positions, workload and scenario (no Qt).

Layout of a file (format version 1)::

    {"format": "dpu-cluster-design", "version": 1, "name": "...",
     "components": [{"id", "kind", "model", "name"?, "parent"?, "slot"?, "props"?, "pos"?}, ...],
     "links": [{"id", "a", "b", "medium", "speed_Gbps", "latency_us"?, "lanes"?, "a_port"?,
                "b_port"?}, ...],
     "workload": {...}, "scenario": {...}, "meta": {...}, "id_counters": {"srv": 12, ...}}

Optional keys are left out when they hold their default, so ``to_dict(from_dict(d)) == d`` for every
saved file. Loading checks the structure against :data:`SCHEMA` (jsonschema), then the meaning
(kinds, field values, link ends, duplicate ids, parents) and reports the first few problems with
their JSON path. Nothing in a file is ever executed: it is read with :mod:`json` only.

Limits (a file beyond them is refused with a message): :data:`MAX_FILE_BYTES` (64 MiB),
:data:`MAX_COMPONENTS` components, :data:`MAX_LINKS` links, :data:`MAX_DEPTH` levels of nesting.
NaN and Infinity are not JSON and are refused.

Older format versions are brought up to date by :data:`MIGRATIONS` (version n -> n+1) on load.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import jsonschema

from designer.errors import UsageError
from designer.topology.design import SCENARIO_CHOICES, Design
from designer.topology.kinds import FIELDS, KINDS, LINK_FIELDS, MEDIA
from designer.topology.model import Component, Link, Topology

FORMAT = "dpu-cluster-design"
VERSION = 1

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_COMPONENTS = 250_000
MAX_LINKS = 1_000_000
MAX_DEPTH = 32
#: how many problems a load error lists before "and N more"
SHOWN_ERRORS = 3

#: version n -> function turning a version-n dict into a version n+1 dict
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

_ID = {"type": "string", "minLength": 1, "maxLength": 200}
_NUMBER = {"type": "number"}
_OPT_INT = {"type": ["integer", "null"]}

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
                    "pos": {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2},
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
        "workload": {"type": "object"},
        "scenario": {
            "type": "object",
            "properties": {
                "offload": {"enum": list(SCENARIO_CHOICES["offload"])},
                "per_server": {"type": "object",
                               "additionalProperties": {"enum": list(SCENARIO_CHOICES["offload"])}},
                "routing": {"enum": list(SCENARIO_CHOICES["routing"])},
                "encryption": {"type": "boolean"},
                "tenants": {"type": "integer", "minimum": 1},
                "checkpoint_interval_s": {"type": "number", "exclusiveMinimum": 0},
                "seed": {"type": "integer", "minimum": 0},
            },
        },
        "meta": {"type": "object"},
        "id_counters": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    },
}

_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
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
        super().__init__(f"{source}: {shown}")


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
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": design.name,
        "components": [_component_dict(c) for c in topo.components.values()],
        "links": [_link_dict(l) for l in topo.links.values()],
        "workload": json.loads(json.dumps(design.workload)),
        "scenario": json.loads(json.dumps(design.scenario)),
        "meta": json.loads(json.dumps(design.meta)),
        "id_counters": topo.counters,
    }


# ---------------------------------------------------------------------------------- from dict
def _json_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _schema_message(err: jsonschema.ValidationError) -> str:
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
        return f"must be {'at least' if kind == 'minimum' else 'above'} {err.validator_value}"
    if kind == "maxItems":
        return f"holds more than {err.validator_value} entries (the limit of this program)"
    if kind in ("minItems",) and err.schema.get("maxItems") == 2:
        return "must be a list of two numbers [x, y]"
    if kind == "minLength":
        return "must not be empty"
    return err.message


class _NonFinite(str):
    """Marks a NaN/Infinity literal found while parsing, so the checker can name its path."""


def _check_tree(data: Any) -> list[tuple[str, str]]:
    """Nesting depth and NaN/Infinity, walked without recursion."""
    errors: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple, int]] = [(data, (), 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, _NonFinite) or (isinstance(node, float) and not math.isfinite(node)):
            errors.append((_json_path(path), f"{node} is not allowed (use a finite number)"))
        elif isinstance(node, (dict, list)):
            if depth >= MAX_DEPTH:
                errors.append((_json_path(path), f"nested more than {MAX_DEPTH} levels deep"))
                continue
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((v, path + (k,), depth + 1) for k, v in items)
    return sorted(errors)


def _semantic_errors(data: dict[str, Any]) -> list[tuple[str, str]]:
    from designer.topology.validation import parent_problem

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


def from_dict(data: Any, source: str = "<file>") -> Design:
    """Check a parsed design file and build the :class:`Design`; raises :class:`DesignFileError`."""
    if not isinstance(data, dict):
        raise DesignFileError(source, [("", "not a design file (the top level must be a JSON object)")])
    if data.get("format") != FORMAT:
        raise DesignFileError(source, [("format", f"not a design file (expected \"format\": \"{FORMAT}\")")])
    errors = _check_tree(data)
    if errors:
        raise DesignFileError(source, errors)
    data = _migrate(data, source)
    errors = sorted(((_json_path(e.absolute_path), _schema_message(e)) for e in _VALIDATOR.iter_errors(data)),
                    key=lambda e: e[0])
    if errors:
        raise DesignFileError(source, errors)
    errors = _semantic_errors(data)
    if errors:
        raise DesignFileError(source, errors)

    topo = Topology()
    for c in data["components"]:
        pos = c.get("pos")
        topo.add_component(Component(
            c["id"], c["kind"], c["model"], c.get("name", ""), c.get("parent"), c.get("slot"),
            dict(c.get("props", {})), (pos[0], pos[1]) if pos is not None else None))
    for l in data["links"]:
        topo.add_link(Link(l["id"], l["a"], l["b"], l["medium"], l["speed_Gbps"], l.get("latency_us", 0.0),
                           l.get("lanes", 1), l.get("a_port"), l.get("b_port")))
    topo.restore_counters(data.get("id_counters", {}))
    return Design(topo, data["name"], data.get("workload"), data.get("scenario"), data.get("meta"))


# ------------------------------------------------------------------------------ text and files
def _reject_constant(name: str) -> _NonFinite:
    return _NonFinite(name)


def loads(text: str, source: str = "<file>") -> Design:
    """Parse design-file text (see :func:`from_dict`)."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        at_end = not text[exc.pos:].strip()
        why = "the file ends early (truncated?)" if at_end else exc.msg
        raise DesignFileError(f"{source}:{exc.lineno}:{exc.colno}", [("", f"not valid JSON: {why}")]) from None
    except RecursionError:
        raise DesignFileError(source, [("", f"nested more than {MAX_DEPTH} levels deep")]) from None
    return from_dict(data, source)


def dumps(design: Design) -> str:
    """The file text: one component or link per line, so files diff well and stay compact."""
    data = to_dict(design)
    try:
        head = {k: v for k, v in data.items() if k not in ("components", "links")}
        lines = ["{"]
        for key, value in head.items():
            lines.append(f" {json.dumps(key)}: {json.dumps(value, allow_nan=False, ensure_ascii=False)},")
        for key in ("components", "links"):
            items = [json.dumps(v, allow_nan=False, ensure_ascii=False) for v in data[key]]
            body = ",\n  ".join(items)
            lines.append(f" {json.dumps(key)}: [\n  {body}\n ]" if items else f" {json.dumps(key)}: []")
            lines[-1] += "," if key == "components" else ""
        lines.append("}")
    except ValueError as exc:
        raise DesignFileError("<design>", [("", f"cannot be saved: {exc} (NaN/Infinity are not allowed)")]) from None
    return "\n".join(lines) + "\n"


def load(path: str | os.PathLike[str]) -> Design:
    """Read a design file; every problem is a :class:`DesignFileError` naming the file."""
    source = str(path)
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            raise DesignFileError(source, [("", (
                f"the file is {size / 2**20:.0f} MiB; this program reads design files up to "
                f"{MAX_FILE_BYTES // 2**20} MiB"))])
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise DesignFileError(source, [("", "no such file")]) from None
    except IsADirectoryError:
        raise DesignFileError(source, [("", "is a folder, not a design file")]) from None
    except OSError as exc:
        raise DesignFileError(source, [("", f"cannot read: {exc.strerror or exc}")]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DesignFileError(source, [("", f"not a text (UTF-8) file (byte {exc.start})")]) from None
    return loads(text, source)


def save(design: Design, path: str | os.PathLike[str]) -> None:
    """Write a design file atomically: a temporary file in the same folder is written, flushed and
    fsync'ed, then renamed over ``path`` and the folder fsync'ed. If anything fails the old file is
    left as it was and the temporary file is removed."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    text = dumps(design)
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
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


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); folders cannot be opened for fsync on Windows."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
