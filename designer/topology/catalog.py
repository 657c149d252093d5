"""The hardware and workload catalog: packaged TOML files plus the user's own catalog files.

Packaged files (``designer.paths.models_dir()``): ``hardware/<kind>.toml`` for the kinds in
``HARDWARE_KINDS``, ``workloads/*.toml`` and ``costs/<name>.toml``. Each hardware or workload file
holds ``[[entry]]`` tables with ``id``, ``name``, ``source`` and figures whose names carry their unit;
``[entry.sources]`` gives per-figure sources (see docs/ARCHITECTURE.md).

User catalogs are loaded after the packaged one, in this order: ``user_config_dir()/"catalog"``
(skipped when ``DPU_DESIGNER_NO_USER_CATALOG`` is set), then each folder of
``$DPU_DESIGNER_CATALOG`` (``os.pathsep``-separated), then ``extra_dirs``. An entry with an id that
is already there replaces it. A user file says which kind it holds by a top-level ``kind = "..."``
or by its name (``server.toml``, ``server-mylab.toml``, ``workloads.toml``). A bad user file is
skipped and reported in ``Catalog.problems`` (one line naming the file, the entry and the field,
and how to fix it); the program goes on with the packaged entries, and the CLI prints each problem
as a ``warning:`` line on stderr (``report_problems``). A bad packaged file is a bug and raises
CatalogError.

User files are hostile input. Before parsing, a file must be a regular file (a FIFO, a socket or a
device such as ``/dev/zero`` is refused without being opened for a blocking read) of at most
``MAX_USER_FILE_BYTES``, valid UTF-8, with keys nested at most ``MAX_KEY_DEPTH`` levels (tomllib
recurses per nesting level and is quadratic in dotted-key depth: a 200 kB ``[x.x.x...]`` header
takes ~10 s). After parsing, every figure must be a single value (no arrays or tables besides
``[entry.sources]``) of the type the packaged entries of that kind give it; numbers must be finite
and not negative (every packaged figure is a count, size, rate, power, time or efficiency, none
negative), and component figures must lie in the range of ``kinds.FIELDS``.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, cast

from designer import paths
from designer.topology import kinds

HARDWARE_KINDS = ("gpu", "cpu", "server", "dpu", "nic", "switch", "storage", "rack")
#: the pseudo-kind under which workloads are kept
WORKLOAD = "workload"
WORKLOAD_KINDS = ("transformer", "vision")
ALL_KINDS = HARDWARE_KINDS + (WORKLOAD,)

#: catalog kind -> component kind whose FIELDS the entries fill (the reverse of kinds.CATALOG_KIND)
_COMPONENT_KIND = {cat: comp for comp, cat in kinds.CATALOG_KIND.items()}
_META = ("id", "name", "source", "sources", "kind")
#: largest user catalog file read (derived: the largest packaged file is ~21 kB; 1 MiB is ~50x that)
MAX_USER_FILE_BYTES = 1024 * 1024
#: deepest key nesting (brackets, braces, dotted parts) a user file may use; packaged files use 2
MAX_KEY_DEPTH = 16


class CatalogError(Exception):
    """A packaged catalog file is broken (a bug in the program's data)."""


@dataclass(frozen=True)
class CatalogProblem:
    """A user catalog file that could not be used (it was skipped)."""

    file: Path
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


class _FileError(Exception):
    pass


class Catalog:
    """All catalog entries by kind; see the module docstring for where they come from."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, dict[str, Any]]] = {k: {} for k in ALL_KINDS}
        self._origin: dict[tuple[str, str], Path] = {}
        self._costs: dict[str, dict[str, Any]] = {}
        #: (component kind, model) -> kind defaults <- entry figures; filled by ``resolve``, emptied
        #: whenever an entry is added (a 16k-GPU design resolves thousands of components of a few models)
        self._resolved: dict[tuple[str, str], dict[str, Any]] = {}
        self.problems: list[CatalogProblem] = []

    # -- queries ---------------------------------------------------------------------------------
    def get(self, kind: str, id: str) -> dict[str, Any]:
        """The entry ``id`` of ``kind`` (a copy); KeyError naming close ids if there is none."""
        return _copy(self._entry(kind, id))

    def entries(self, kind: str) -> list[dict[str, Any]]:
        return [_copy(e) for e in self._table(kind).values()]

    def ids(self, kind: str) -> list[str]:
        return list(self._table(kind))

    def origin(self, kind: str, id: str) -> Path:
        """The file the entry was loaded from (the last one, if a user file replaced it)."""
        self._entry(kind, id)
        return self._origin[(kind, id)]

    def source_of(self, kind: str, id: str, field: str) -> str:
        """The source of one figure: its ``sources`` line, else the entry's ``source``."""
        entry = self._entry(kind, id)
        if field not in entry:
            raise KeyError(f"{kind} '{id}' has no figure '{field}'")
        return cast(str, entry.get("sources", {}).get(field) or entry.get("source", ""))

    def resolve(self, component: Any) -> dict[str, Any]:
        """Effective figures of a component: kind defaults <- catalog entry <- ``component.props``.

        Works with any object that has ``kind``, ``model`` and ``props``. Entry figures outside the
        kind's FIELDS (e.g. a server's ``nic_model``) are included too; id/name/source are not.
        """
        key = (component.kind, component.model)
        base = self._resolved.get(key)
        if base is None:
            base = kinds.defaults(component.kind)
            if component.model:
                entry = self._entry(kinds.CATALOG_KIND[component.kind], component.model)
                base.update({k: v for k, v in entry.items() if k not in _META})
            self._resolved[key] = base
        values = _copy(base)
        values.update(component.props or {})
        return values

    def workload(self, id: str) -> dict[str, Any]:
        return self.get(WORKLOAD, id)

    def workloads(self, kind: str | None = None) -> list[dict[str, Any]]:
        """All workloads, or those of one workload kind ("transformer" or "vision")."""
        return [w for w in self.entries(WORKLOAD) if kind is None or w["kind"] == kind]

    def costs(self, name: str) -> dict[str, Any]:
        """``models/costs/<name>.toml`` as a dict (a copy); KeyError listing the available names."""
        if name not in self._costs:
            folder = paths.models_dir() / "costs"
            file = folder / f"{name}.toml"
            if not file.is_file():
                known = sorted(p.stem for p in folder.glob("*.toml"))
                raise KeyError(f"no cost table '{name}'; known: {', '.join(known) or 'none'}")
            self._costs[name] = _read_toml(file)
        return copy.deepcopy(self._costs[name])

    def _entry(self, kind: str, id: str) -> dict[str, Any]:
        table = self._table(kind)
        if id not in table:
            close = difflib.get_close_matches(str(id), list(table), n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(table) or 'none'}"
            raise KeyError(f"no {kind} '{id}' in the catalog; {hint}")
        return table[id]

    def _table(self, kind: str) -> dict[str, dict[str, Any]]:
        if kind not in self._entries:
            raise KeyError(f"unknown catalog kind '{kind}'; choose one of {', '.join(ALL_KINDS)}")
        return self._entries[kind]

    # -- loading ---------------------------------------------------------------------------------
    def _load_file(self, file: Path, kind: str | None, *, user: bool) -> None:
        """Check a whole file first, then add its entries, so a bad file adds nothing."""
        data = _read_toml(file, user=user)
        kind = _file_kind(file, data) if kind is None else kind
        raw = data.get("entry")
        if not isinstance(raw, list) or not raw or not all(isinstance(e, dict) for e in raw):
            raise _FileError("no [[entry]] tables")
        seen: set[str] = set()
        checked = []
        for n, entry in enumerate(raw, 1):
            entry = dict(entry)
            if user:
                entry.setdefault("source", f"user catalog {file}")
            where = f"entry {n} (id '{entry.get('id', '?')}')"
            message = _check_entry(kind, entry) or (_check_figures(kind, entry) if user else None)
            if message:
                raise _FileError(f"{where}: {message}")
            if entry["id"] in seen:
                raise _FileError(f"{where}: id is used twice in this file")
            seen.add(entry["id"])
            checked.append(entry)
        self._resolved.clear()
        for entry in checked:
            self._entries[kind][entry["id"]] = entry
            self._origin[(kind, entry["id"])] = file


def _copy(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy the caller may change: scalars are shared (immutable), nested tables and arrays are
    deep-copied. Much cheaper than ``copy.deepcopy`` of the whole entry, which matters when a large
    design resolves every component."""
    return {k: v if v is None or isinstance(v, (str, int, float, bool)) else copy.deepcopy(v) for k, v in entry.items()}


def _read_toml(file: Path, *, user: bool = False) -> dict[str, Any]:
    """Parse a catalog file; a user file is first checked as the module docstring says."""
    if not user:
        try:
            with open(file, "rb") as fh:
                return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise _FileError(f"invalid TOML: {exc}") from None
        except OSError as exc:
            raise _FileError(f"cannot read: {exc.strerror}") from None
    from designer.errors import UsageError
    from designer.safeio import open_input_bytes

    try:
        raw = open_input_bytes(file, what="catalog file", max_bytes=MAX_USER_FILE_BYTES)
    except UsageError as exc:
        # the safeio message starts with "catalog file <path>"; the problem names the file already
        text = str(exc)
        prefix = f"catalog file {file}"
        raise _FileError(text[len(prefix):].lstrip(" :") if text.startswith(prefix) else text) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _FileError(f"not UTF-8 text (bad byte at line {line}); save the file as UTF-8") from None
    depth = _key_depth(text)
    if depth > MAX_KEY_DEPTH:
        raise _FileError(f"keys or values are nested {depth} levels deep (at most {MAX_KEY_DEPTH}); "
                         f"a catalog entry is a flat [[entry]] table")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _FileError(f"invalid TOML: {exc}") from None
    except (RecursionError, MemoryError):
        raise _FileError("nested too deeply to read; a catalog entry is a flat [[entry]] table") from None


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')


def _key_depth(text: str) -> int:
    """The deepest nesting a TOML text could build: per line, the dotted parts of a key or table
    header plus the open brackets/braces of a value, with quoted strings left out (a cheap upper
    bound; exact for the flat files a catalog holds)."""
    deepest = 0
    level = 0  # brackets/braces still open from earlier lines (multi-line arrays)
    for line in text.splitlines():
        bare = _QUOTED.sub('""', line).split("#", 1)[0]
        key, eq, value = bare.partition("=")
        stripped = key.strip()
        if not eq:  # a table header, or a continued multi-line array
            if stripped.startswith("["):
                deepest = max(deepest, stripped.count(".") + 2)
                continue
            value = bare
        else:
            deepest = max(deepest, stripped.count(".") + 1 + level)
        for ch in value:
            if ch in "[{":
                level += 1
                deepest = max(deepest, level + 1)
            elif ch in "]}":
                level = max(0, level - 1)
    return deepest


def _file_kind(file: Path, data: dict[str, Any]) -> str:
    kind = data.get("kind")
    if kind is None:
        stem = file.stem.split("-")[0].lower()
        kind = {"workloads": WORKLOAD, "gpu_server": "server"}.get(stem, stem)
    if kind not in ALL_KINDS:
        raise _FileError(f"cannot tell which kind of entries this file holds; name it <kind>.toml "
                         f"or add kind = \"...\" at the top (kinds: {', '.join(ALL_KINDS)})")
    return kind


def _check_entry(kind: str, entry: dict[str, Any]) -> str | None:
    """A message if ``entry`` is not a valid entry of ``kind``, else None."""
    if not isinstance(entry.get("id"), str) or not entry["id"].strip():
        return "needs an id (a non-empty string)"
    entry.setdefault("name", entry["id"])
    if not isinstance(entry["name"], str) or not isinstance(entry.get("source", ""), str):
        return "name and source must be strings"
    sources = entry.setdefault("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        return "[entry.sources] must map figure names to strings"
    for field in sources:
        if field not in entry:
            return f"[entry.sources] names '{field}', which the entry does not have"
    if kind == WORKLOAD and entry.get("kind") not in WORKLOAD_KINDS:
        return f"kind must be one of {', '.join(WORKLOAD_KINDS)}"
    for spec in kinds.FIELDS.get(_COMPONENT_KIND.get(kind, ""), ()):
        if spec.name in entry:
            message = spec.check(entry[spec.name])
            if message:
                return f"{spec.name} {message}"
    return None


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a table" if isinstance(value, dict) else "an array" if isinstance(value, list) else "a value"


def _check_figures(kind: str, entry: dict[str, Any]) -> str | None:
    """The checks of a user entry's figures beyond ``kinds.FIELDS`` (see the module docstring):
    a message naming the figure and what it must be, else None."""
    import math

    known = _packaged_types().get(kind, {})
    for name, value in entry.items():
        if name in ("id", "name", "source", "sources") or (kind == WORKLOAD and name == "kind"):
            continue
        if isinstance(value, (dict, list)):
            return f"{name} is {_type_name(value)}; a figure is a single number, string or true/false"
        want = known.get(name)
        if want is not None and _type_name(value) != want:
            return f"{name} must be {want} (it is {_type_name(value)} here), as in the packaged {kind} entries"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{name} = {value} is not a finite number; give a number"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value < 0:
                return f"{name} = {value:g} is negative; catalog figures are amounts (0 or more)"
            if value > 1e18:
                return f"{name} = {value:g} is beyond any real figure; check the unit in the name"
    if kind == WORKLOAD:
        from designer.topology.fileformat import workload_problem

        for name, value in entry.items():
            if name in ("id", "name", "source", "sources", "kind"):
                continue
            problem = workload_problem(name, value)
            if problem:
                return f"{name} {problem}"
    return None


_PACKAGED_TYPES: dict[str, dict[str, str]] | None = None


def _packaged_types() -> dict[str, dict[str, str]]:
    """Kind -> figure -> the type the packaged entries give it (derived from the packaged files
    themselves, so a new packaged figure needs no code change)."""
    global _PACKAGED_TYPES
    if _PACKAGED_TYPES is None:
        types: dict[str, dict[str, str]] = {k: {} for k in ALL_KINDS}
        catalog = _build_packaged()
        for kind in ALL_KINDS:
            for entry in catalog._table(kind).values():
                for name, value in entry.items():
                    if name not in _META:
                        types[kind].setdefault(name, _type_name(value))
        _PACKAGED_TYPES = types
    return _PACKAGED_TYPES


def _user_dirs(extra_dirs: Iterable[str | os.PathLike] | None) -> list[tuple[Path, bool]]:
    """User catalog folders in load order, each with whether it must exist."""
    dirs: list[tuple[Path, bool]] = []
    if not os.environ.get("DPU_DESIGNER_NO_USER_CATALOG"):
        dirs.append((paths.user_config_dir() / "catalog", False))
    env = os.environ.get("DPU_DESIGNER_CATALOG", "")
    dirs += [(Path(d), True) for d in env.split(os.pathsep) if d]
    dirs += [(Path(d), True) for d in extra_dirs or ()]
    return dirs


def _build_packaged() -> Catalog:
    catalog = Catalog()
    models = paths.models_dir()
    packaged = [(models / "hardware" / f"{k}.toml", k) for k in HARDWARE_KINDS]
    packaged += [(f, WORKLOAD) for f in sorted((models / "workloads").glob("*.toml"))]
    for file, kind in packaged:
        try:
            catalog._load_file(file, kind, user=False)
        except _FileError as exc:
            raise CatalogError(f"packaged catalog file {file}: {exc}") from None
    return catalog


def _user_files(folder: Path) -> list[Path]:
    """The ``*.toml`` files of a user catalog folder (OSError when it cannot be listed)."""
    return sorted(p for p in folder.iterdir() if p.name.endswith(".toml") and not p.name.startswith("."))


def _build(extra_dirs: Iterable[str | os.PathLike] | None) -> Catalog:
    catalog = _build_packaged()
    for folder, must_exist in _user_dirs(extra_dirs):
        try:
            exists = folder.exists()
            is_dir = folder.is_dir()
        except OSError:
            exists = is_dir = False
        if not is_dir:
            if must_exist:
                what = ("is not a folder; $DPU_DESIGNER_CATALOG and catalog folders name folders "
                        "holding <kind>.toml files" if exists else "catalog folder does not exist")
                catalog.problems.append(CatalogProblem(folder, what))
            continue
        try:
            files = _user_files(folder)
        except OSError as exc:
            catalog.problems.append(CatalogProblem(folder, f"cannot list the folder ({exc.strerror or exc})"))
            continue
        for file in files:
            try:
                catalog._load_file(file, None, user=True)
            except _FileError as exc:
                catalog.problems.append(CatalogProblem(file, f"{exc} (file skipped)"))
    return catalog


_cached: Catalog | None = None


def load_catalog(extra_dirs: Iterable[str | os.PathLike] | None = None) -> Catalog:
    """The catalog; the default call (no ``extra_dirs``) is built once and cached."""
    global _cached
    if extra_dirs is not None:
        return _build(extra_dirs)
    if _cached is None:
        _cached = _build(None)
    return _cached


def report_problems(catalog: Catalog, stream=None) -> None:
    """Print each user catalog problem once as a ``warning:`` line (stderr by default); the CLI
    commands call it after ``load_catalog`` so a skipped user file is never silent."""
    import sys

    if getattr(catalog, "_reported", False):
        return
    catalog._reported = True  # type: ignore[attr-defined]
    for problem in catalog.problems:
        print(f"warning: user catalog {problem}", file=stream or sys.stderr)


def reload_catalog() -> Catalog:
    """Drop the cached catalog (e.g. after the user edited a catalog file) and load it again."""
    global _cached
    _cached = None
    return load_catalog()


#: the kinds a figure's source can give it, in the words its source starts with
FIGURE_KINDS = ("measured", "datasheet", "derived", "assumed", "not found")
#: words of a source line that cite a vendor document (a figure so sourced is a datasheet figure)
_VENDOR_DOC = ("user guide", "user manual", "manual", "datasheet", "documentation", "release notes",
               "product brief", "installation guide", "specification")


def figure_kind(source: str) -> str:
    """The kind of a figure from its source line: the word it starts with (measured, datasheet,
    derived, assumed; "not found" for a figure left out, 0, because no source gives it); a source that cites a vendor document without such a word is a datasheet
    figure; anything else "unmarked". A source that names a tuning limit adds ", tuning limit"."""
    text = source.strip().lower()
    kind = next((k for k in FIGURE_KINDS if text.startswith(k)), "")
    if not kind:
        kind = "datasheet" if any(w in text for w in _VENDOR_DOC) else "unmarked" if text else "no source"
    return kind + (", tuning limit" if "tuning limit" in text else "")
