"""Sweeps: the engine run over values of one design parameter, host-managed and DPU-offloaded.

A parameter is named as
  ``servers``               regenerate the design from the template recorded in ``design.meta``
  ``workload.NAME`` / NAME  a numeric workload setting (``global_batch``, ``tokens`` ...)
  ``scenario.NAME`` / NAME  a numeric scenario setting (``tenants``, ``checkpoint_interval_s`` ...)
  ``KIND.FIELD``            a numeric field of every component of a kind (``gpu_server.gpu_count``)
  ``ID.FIELD``              a numeric field of one component (``srv1.gpu_count``)

Several parameters make a grid (:class:`Grid`): every combination of their values, made lazily
(``itertools.product``, the last parameter varying fastest), at most :data:`MAX_POINTS` points.
Every combination is one point: the design with the values applied (``servers`` first, since it
regenerates the design; then the others in the order given), run in the three offload modes of
``compare`` (host-managed, SmartNIC-offloaded, DPU-offloaded). This module holds the pure parts:
:func:`prepare` checks every value and makes the shared object (the design as a plain dict, the
parameters, the seed), :func:`point` runs one combination against it, :class:`Summary` keeps a
bounded sample of the points for a table or a plot (a sweep of a million points writes every row
to a file and holds a few hundred). Spreading points over processes or a Dask cluster is
:mod:`designer.services.sweeping`'s (the engine imports no services). Each point gets the same
design dict and the same seed, so a point's result does not depend on which worker ran it or in
what order: results are identical for any worker count or executor.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterator, Sequence

from designer.engine.compare import MODES, SCENARIO_SETTINGS
from designer.engine.workload import Workload, whole_batch
from designer.errors import UsageError
from designer.topology.design import SCENARIO_DEFAULTS, Design
from designer.topology.kinds import FIELDS, KINDS

#: the offload modes of every point (those of ``dpu-designer compare``, in its order)
SCENARIOS = MODES
#: figures kept from each engine result (keys of ``Result.to_json()``; ``energy_MWh`` is its
#: ``energy_kwh`` / 1000, named as ``optimize``'s file names it; ``memory_per_gpu_GB`` is NaN for a
#: workload without the parameters it needs)
METRICS = ("training_time_days", "mfu", "iteration_time_s", "tflops_per_gpu", "tokens_per_s",
           "energy_MWh", "memory_per_gpu_GB")

_NUMERIC = ("int", "float")
#: workload settings a sweep may vary (the numeric fields of ``Workload``)
WORKLOAD_NUMBERS = tuple(f.name for f in fields(Workload) if f.type in _NUMERIC)


@dataclass(frozen=True)
class SweepResult:
    """The points of a sweep a table or a plot shows: all of them up to :data:`Summary.HEAD`,
    else the sample :class:`Summary` kept (``thinned`` says how it was chosen)."""

    params: tuple[str, ...]
    #: ``values[i][k]`` is parameter ``params[k]`` of kept point ``i``
    values: tuple[tuple[float, ...], ...]
    #: ``rows[i][scenario][metric]`` for ``values[i]``
    rows: tuple[dict[str, dict[str, float]], ...]
    #: what was changed beyond the parameter (a layout refitted to a changed global batch)
    notes: tuple[str, ...] = ()
    #: points run (every one written to ``--out``); None: those kept
    total: int | None = None
    #: how the kept points were chosen when not all are kept, else ""
    thinned: str = ""

    @property
    def param(self) -> str:
        """The parameters' names as a label: ``servers``, ``servers x global_batch``."""
        return " x ".join(self.params)

    def axis(self, k: int = 0) -> list[float]:
        """Parameter ``params[k]``'s value of every kept point."""
        return [v[k] for v in self.values]

    def to_json(self) -> dict:
        one = len(self.params) == 1
        head = {"param": self.params[0]} if one else {"params": list(self.params)}
        points = [{"value": v[0]} if one else {"values": list(v)} for v in self.values]
        out = {**head, "scenarios": list(SCENARIOS), "metrics": list(METRICS),
               "points": [{**p, **row} for p, row in zip(points, self.rows)],
               "notes": list(self.notes),
               "total": len(self.rows) if self.total is None else self.total}
        if self.thinned:
            out["thinned"] = self.thinned
        return out

    def series(self, scenario: str, metric: str) -> list[float]:
        return [row[scenario][metric] for row in self.rows]


#: most points one sweep runs (a bound on a mistyped grid, not on what the code can hold: the rows
#: stream to a file and :class:`Summary` keeps a few hundred; at the ~3 points/s the bench measures
#: on a 2-core machine for the small example design, a million points take about four days)
MAX_POINTS = 1_000_000


def parse_values(text: str) -> list[float]:
    """``"16,64,256"`` -> [16, 64, 256]; a clear message for anything else."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        try:
            value = float(part)
        except ValueError:
            raise UsageError(f"--values: '{part}' is not a number (give a comma-separated list "
                             "such as 16,64,256)") from None
        if not math.isfinite(value):
            raise UsageError(f"--values: '{part}' is not a finite number")
        out.append(int(value) if value.is_integer() and abs(value) < 2 ** 53 else value)
    if not out:
        raise UsageError("--values: give at least one value")
    if len(out) > MAX_POINTS:
        raise UsageError(f"--values: {len(out):,} values given; a sweep runs at most {MAX_POINTS:,} "
                         "points (each is three engine runs); sweep a coarser grid")
    return out


@dataclass(frozen=True)
class Grid:
    """Every combination of the values of ``params`` (``values[k]`` for ``params[k]``), in
    ``itertools.product`` order: the last parameter varies fastest."""

    params: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]

    @property
    def size(self) -> int:
        return math.prod(len(v) for v in self.values)

    def points(self) -> Iterator[tuple[float, ...]]:
        """The combinations, made one at a time (a grid is never a list)."""
        return itertools.product(*self.values)

    def words(self) -> str:
        """``servers (4 values) x global_batch (3 values)``."""
        return " x ".join(f"{p} ({len(v)} value{'s' if len(v) != 1 else ''})"
                          for p, v in zip(self.params, self.values))


def make_grid(params: Sequence[str], values: Sequence[Sequence[float]]) -> Grid:
    """The grid of ``--param A --values ... --param B --values ...`` (paired in order); refused in
    one line: a --param without its --values, a parameter given twice, more than
    :data:`MAX_POINTS` points."""
    params, values = list(params or ()), list(values or ())
    if not params or len(params) != len(values):
        raise UsageError(f"sweep: each --param needs its --values (got {len(params)} --param and "
                         f"{len(values)} --values); e.g. --param servers --values 16,64")
    seen = set()
    for p in params:
        if p in seen:
            raise UsageError(f"--param {p}: given twice; give each parameter once with all its values")
        seen.add(p)
    grid = Grid(tuple(params), tuple(tuple(v) for v in values))
    if not all(grid.values):
        raise UsageError("--values: give at least one value")
    if grid.size > MAX_POINTS:
        raise UsageError(f"sweep: the grid {grid.words()} has {grid.size:,} points; at most "
                         f"{MAX_POINTS:,}: give fewer values")
    return grid


def as_grid(param: "str | Grid", values: Sequence[float] | None = None) -> Grid:
    """``param`` as a grid: a :class:`Grid` as it is, one parameter with ``values`` otherwise."""
    if isinstance(param, Grid):
        return param
    return make_grid([param], [list(values or ())])


def _field_spec(kind: str, name: str, where: str):
    for spec in FIELDS[kind]:
        if spec.name == name:
            if spec.type not in _NUMERIC:
                raise UsageError(f"{where}: '{name}' of a {kind} is not numeric ({spec.type})")
            return spec
    names = ", ".join(s.name for s in FIELDS[kind] if s.type in _NUMERIC)
    raise UsageError(f"{where}: a {kind} has no field '{name}' (numeric fields: {names})")


def _regenerate(design: Design, servers: float) -> Design:
    info = design.meta.get("template")
    if isinstance(info, str):  # {"template": NAME, "options": {...}} as the templates record it
        info = {"name": info, "options": design.meta.get("options") or {}}
    if not isinstance(info, dict) or "name" not in info:
        raise UsageError("--param servers: this design does not record the template it was made "
                         "from (design meta 'template'); make it with 'dpu-designer new' or sweep a "
                         "component field instead, e.g. --param gpu_server.gpu_count")
    from designer.topology.templates import TEMPLATES

    name = info["name"]
    if name not in TEMPLATES:
        raise UsageError(f"--param servers: unknown template '{name}' in the design's meta "
                         f"(known: {', '.join(TEMPLATES)})")
    template = TEMPLATES[name]
    if "servers" not in {o.name for o in template.options}:
        raise UsageError(f"--param servers: the {name} template does not take a server count "
                         "(sweep one of its own options instead)")
    if not float(servers).is_integer() or servers < 1:
        raise UsageError(f"--param servers: {servers} is not a positive whole number of servers")
    options = {**info.get("options", {}), "servers": int(servers)}
    new = template(**options)
    new.name, new.workload, new.scenario = design.name, dict(design.workload), dict(design.scenario)
    new.meta = {**design.meta, "template": name, "options": options}
    workload = new.workload
    if workload.get("preset"):
        from designer.engine import fit
        from designer.topology.catalog import load_catalog

        catalog = load_catalog()
        if fit.is_fitted(workload, design, catalog):
            # a layout `new` fitted to the design (nobody chose it) is fitted again at every
            # size: the published batch kept, the layout that divides it on this many GPUs
            new.workload = fit.fitted_workload(str(workload["preset"]), new, catalog,
                                               where="--param servers")
        elif not workload.get("dp") and not workload.get("gpus"):
            # a preset saved to fill the design by an older `new` (its batch rounded up to whole
            # micro-batches per replica) keeps filling it at every size, rounded up the same way
            try:
                entry = {**catalog.workload(workload["preset"]), **workload}
            except KeyError as exc:
                raise UsageError(f"workload: {exc.args[0]}") from None
            gpus = sum(int(catalog.resolve(s)["gpu_count"]) for s in new.topology.servers())
            workload["global_batch"] = whole_batch(entry, gpus)
    return new


#: workload settings whose change refits dp and micro-batch when the layout stops dividing the batch
REFIT_ON = ("global_batch", "micro_batch")


def _refit(workload: dict, design: Design, param: str, value: float) -> str | None:
    """:func:`designer.engine.fit.refit_for_batch` on ``workload`` (in place), its line prefixed
    with the swept value."""
    from designer.engine.fit import refit_for_batch
    from designer.topology.catalog import load_catalog

    note = refit_for_batch(workload, design, load_catalog())
    return f"{param} = {value:g}: {note}" if note else None


def _scenario_numbers() -> list[str]:
    """The scenario settings a sweep can vary (numeric defaults)."""
    return [k for k, v in SCENARIO_DEFAULTS.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _close(name: str, names: list[str]) -> str:
    """The end of an unknown parameter's message: up to three close names ("did you mean X?")
    and where the whole list is (``sweep FILE --list``), not every name (a wall of 80 names, most
    of them not numeric, was the message before)."""
    import difflib

    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    return ((f" (did you mean {' or '.join(close)}?)" if close else "")
            + "; 'dpu-designer sweep FILE --list' lists what the design can sweep")


def _target(design: Design, param: str) -> tuple[str, str, list, Callable[[Any], str | None]]:
    """Where ``param`` points in ``design``: (section, name, components, the value check).

    ``section`` is "servers", "workload", "scenario" or "component" (then ``components`` are the
    targets). The value check is the one ``--set`` and loading a design file apply (one check for
    both): :meth:`designer.topology.design.Setting.problem` for a scenario setting,
    :func:`designer.topology.fileformat.workload_problem` for a workload setting,
    :meth:`designer.topology.kinds.FieldSpec.check` for a component field."""
    if param == "servers":
        def whole(v: Any) -> str | None:
            return None if float(v).is_integer() and v >= 1 else "must be a positive whole number of servers"
        return "servers", "servers", [], whole
    head, _, tail = param.partition(".")
    if tail and head in ("workload", "scenario"):
        section, name = head, tail
    elif not tail:
        section, name = ("scenario", param) if param in SCENARIO_DEFAULTS else ("workload", param)
    else:
        section, name = "component", tail
    if section == "workload" and name not in WORKLOAD_NUMBERS:
        raise UsageError(f"--param {param}: '{name}' is not a numeric workload setting"
                         f"{_close(name, [*WORKLOAD_NUMBERS, *_scenario_numbers(), 'servers'])}")
    if section == "scenario" and name not in SCENARIO_DEFAULTS:
        raise UsageError(f"--param {param}: unknown scenario setting '{name}'"
                         f"{_close(name, _scenario_numbers())}")
    if section in ("workload", "scenario"):
        current = getattr(design, section).get(name, SCENARIO_DEFAULTS.get(name) if section == "scenario" else 0)
        if isinstance(current, bool) or not isinstance(current, (int, float)):
            raise UsageError(f"--param {param}: the {section} setting '{name}' is not numeric "
                             f"(it is {current!r})")
        if section == "scenario":
            from designer.topology.design import SCENARIO_SPEC

            spec = SCENARIO_SPEC.get(name)
            return section, name, [], (lambda v: spec.problem(v) if spec else None)
        from designer.topology.fileformat import workload_problem

        return section, name, [], (lambda v: workload_problem(name, v))
    topo = design.topology
    if head in KINDS:
        field = _field_spec(head, tail, f"--param {param}")
        targets = [c for c in topo.components.values() if c.kind == head]
        if not targets:
            raise UsageError(f"--param {param}: the design has no {head} components")
    elif head in topo.components:
        targets = [topo.components[head]]
        field = _field_spec(targets[0].kind, tail, f"--param {param}")
    else:
        raise UsageError(f"--param {param}: '{head}' is neither a component id nor a kind "
                         f"({', '.join(KINDS)}), nor 'workload'/'scenario'")
    return section, name, targets, field.check


def sweepable(design: Design, catalog: Any) -> list[tuple[str, list[tuple[str, float | None]]]]:
    """The parameters a sweep of ``design`` takes, grouped: ``[(group, [(param, present value or
    None)])]``. Groups: the server count (a design that records its template), the numeric
    workload settings (:data:`WORKLOAD_NUMBERS`, present value from the design's workload over its
    catalog preset), the numeric scenario settings, and per component kind in the design its
    numeric fields (``KIND.FIELD``, every component of the kind; the value when they share one).
    Every name listed is one :func:`apply_param` takes."""
    groups: list[tuple[str, list[tuple[str, float | None]]]] = []
    meta = design.meta.get("template")
    if meta:
        groups.append(("design size (regenerated from its template)",
                       [("servers", float(len(design.topology.servers())))]))
    preset = design.workload.get("preset") or design.workload.get("id")
    try:
        entry = dict(catalog.workload(preset)) if preset else {}
    except KeyError:
        entry = {}
    workload = {**entry, **design.workload}

    def number(v: Any) -> float | None:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    groups.append(("workload (workload.NAME)", [(f"workload.{k}", number(workload.get(k)))
                                                for k in WORKLOAD_NUMBERS]))
    scenario = {**SCENARIO_DEFAULTS, **design.scenario}
    groups.append(("scenario (scenario.NAME)", [(f"scenario.{k}", number(v)) for k, v in scenario.items()
                                                if k in SCENARIO_DEFAULTS and number(SCENARIO_DEFAULTS[k]) is not None]))
    for kind in KINDS:
        comps = design.topology.of_kind(kind)
        if not comps:
            continue
        rows = []
        for spec in FIELDS[kind]:
            if spec.type not in _NUMERIC:
                continue
            seen = set()
            for comp in comps:
                try:
                    seen.add(catalog.resolve(comp).get(spec.name))
                except KeyError:
                    seen.add(None)
            rows.append((f"{kind}.{spec.name}", number(seen.pop()) if len(seen) == 1 else None))
        groups.append((f"every {kind} ({len(comps):,}; ID.FIELD for one of them)", rows))
    return groups


def check_values(design: Design, param: str, values: Sequence[float]) -> None:
    """Refuse, before anything runs, a value the design could not hold (a negative GPU count, a
    storage IO below its minimum, a seed beyond its range): the message names the parameter, the
    value and what is allowed."""
    _, _, _, check = _target(design, param)
    for value in values:
        problem = check(value)
        if problem:
            raise UsageError(f"--values: {param} = {value:g}: {problem}")


def apply_param(design: Design, param: str, value: float, notes: list[str] | None = None) -> Design:
    """A copy of ``design`` with ``param`` (see the module docstring) set to ``value``; a value the
    design could not hold is refused (:func:`check_values`).

    A global batch (or micro-batch) that the design's dp x micro-batch does not split refits dp
    and micro-batch, tp, cp and pp kept (:func:`designer.engine.fit.refit_for_batch`); the line
    saying so is appended to ``notes``."""
    check_values(design, param, [value])
    if param == "servers":
        return _regenerate(design, value)
    new = design.copy()
    section, name, _, _ = _target(new, param)
    if section in ("workload", "scenario"):
        getattr(new, section)[name] = value
        if section == "workload" and name in REFIT_ON:
            note = _refit(new.workload, new, param, value)
            if note and notes is not None:
                notes.append(note)
        return new
    _, _, targets, _ = _target(new, param)
    for comp in targets:
        new.topology.set_prop(comp.id, name, value)
    return new


def apply_point(design: Design, params: Sequence[str], values: Sequence[float],
                notes: list[str] | None = None) -> Design:
    """A copy of ``design`` with every ``params[k]`` set to ``values[k]`` (:func:`apply_param`):
    ``servers`` first (it regenerates the design from its template, which would drop a component
    field set before it), then the others in the order given."""
    order = sorted(range(len(params)), key=lambda k: params[k] != "servers")
    for k in order:
        design = apply_param(design, params[k], values[k], notes)
    return design


def engine_point(design: Design, scenario: str, seed: int) -> dict[str, float]:
    """The figures :data:`METRICS` of one engine run of ``design`` in offload mode ``scenario``
    (``designer.engine.compare.SCENARIO_SETTINGS``), the same run ``dpu-designer compare`` makes."""
    from designer.engine import pipeline
    from designer.topology.catalog import load_catalog

    data = pipeline.run(design, load_catalog(), scenario=dict(SCENARIO_SETTINGS[scenario]), seed=seed).to_json()
    data["energy_MWh"] = float(data["energy_kwh"]) / 1e3
    return {m: math.nan if data.get(m) is None else float(data[m]) for m in METRICS}


#: (the shared design dict, the design decoded from it): a worker decodes the design once, not per point
_decoded: tuple[Any, Design] | None = None


def point(values: tuple[float, ...], shared: tuple) -> tuple[dict[str, dict[str, float]], tuple[str, ...]]:
    """One point: ``(row, notes)``, ``row`` being ``evaluate(design with the values applied, mode,
    seed)`` for every mode of :data:`SCENARIOS`, ``notes`` the lines saying what changed beyond the
    parameters (:func:`apply_param`). ``shared`` is :func:`prepare`'s ``(design dict, params,
    seed, evaluate)``, the same for every point (sent once per worker); this function is pure, so
    a point's result is the same wherever and in whatever order it runs."""
    global _decoded
    design_dict, params, seed, evaluate = shared
    if _decoded is None or _decoded[0] is not design_dict:
        from designer.topology.fileformat import from_dict

        _decoded = (design_dict, from_dict(design_dict, source="<sweep>"))
    notes: list[str] = []
    design = apply_point(_decoded[1], params, values, notes)  # a copy: the decoded design is never changed
    return {s: evaluate(design, s, seed) for s in SCENARIOS}, tuple(notes)


#: most component copies :func:`check_points` makes applying combinations one by one (each
#: combination copies the design: measured here at 1.0 ms for the 97 components of the example
#: design, 6 ms for 3,031, 94 ms for 24,950, i.e. 4-10 us a component; so about 2-5 s at most).
#: Beyond it, each distinct ``servers`` value is checked with the other parameters at their first.
CHECK_WORK = 500_000


def _section(param: str) -> str:
    """``servers``, ``workload``, ``scenario`` or ``component``, as :func:`_target` reads ``param``
    (without looking at a design)."""
    if param == "servers":
        return "servers"
    head, _, tail = param.partition(".")
    if tail and head in ("workload", "scenario"):
        return head
    if not tail:
        return "scenario" if param in SCENARIO_DEFAULTS else "workload"
    return "component"


def _words(params: Sequence[str], values: Sequence[float]) -> str:
    return ", ".join(f"{p} = {v:g}" for p, v in zip(params, values))


def check_points(design: Design, grid: Grid, catalog: Any = None) -> None:
    """Refuse, before any point runs, a combination of the grid that cannot run, naming it.

    What can fail at one combination and not at the first is what depends on another parameter's
    value: a ``servers`` value regenerates the design (its fitted layout fitted again, which may
    find none), and a component parameter (``ID.FIELD``, ``KIND.FIELD``) must find its components
    in the design of every server count; a workload setting or a component's GPU count changes
    the layout the engine checks (global batch = dp x micro-batch x gradient accumulation on the
    GPUs). So every distinct ``servers`` value is regenerated here, one at a time (one design
    held at once), and every component parameter looked up in it; then the combinations of the
    other parameters that change the design or its workload (component fields, workload
    settings; the scenario settings at their first values, as they change neither) are applied
    to it (:func:`apply_point`, with its refit) and its workload checked on its GPUs as the
    engine checks it (``pipeline.resolve_workload``): all of them while they cost at most
    :data:`CHECK_WORK` component copies over the grid, else only the one with the others at
    their first values. Checked only when the design runs one job (``scenario.tenants`` 1 and
    not swept): tenants split the GPUs, which the engine checks per job."""
    from designer.engine import pipeline
    from designer.engine.fit import design_gpus
    from designer.topology.catalog import load_catalog

    catalog = catalog or load_catalog()
    params = grid.params
    first = next(grid.points())
    components = [p for p in params if _section(p) == "component"]
    scenario = [j for j, p in enumerate(params) if _section(p) == "scenario"]
    tenants = any(params[j].removeprefix("scenario.") == "tenants" for j in scenario)
    one_job = not tenants and int(design.scenario.get("tenants", SCENARIO_DEFAULTS.get("tenants", 1)) or 1) == 1
    k = params.index("servers") if "servers" in params else None
    others = [j for j in range(len(params)) if j not in scenario and j != k]
    sizes: list[float | None] = list(dict.fromkeys(grid.values[k])) if k is not None else [None]
    combos = math.prod(len(grid.values[j]) for j in others)
    for value in sizes:
        base = design
        if value is not None:
            try:
                base = _regenerate(design, value)
            except UsageError as exc:
                raise UsageError(f"sweep: the points with servers = {value:g} cannot run: {exc}") from None
            for param in components:
                head = param.partition(".")[0]
                why = None
                if head in KINDS or head in base.topology.components:
                    try:
                        _target(base, param)
                    except UsageError as exc:
                        why = str(exc).removeprefix(f"--param {param}: ")
                else:
                    why = f"the design has no component '{head}'"
                if why:
                    raise UsageError(f"sweep: the points with servers = {value:g} cannot set {param}: at "
                                     f"{value:g} servers {why}; sweep a KIND.FIELD (every component of a "
                                     "kind) or leave that server count out")
        if not one_job:
            continue
        chosen: Iterator[tuple[float, ...]]
        if combos * len(base.topology.components) * len(sizes) <= CHECK_WORK:
            chosen = itertools.product(*[grid.values[j] for j in others])
        else:
            chosen = iter([tuple(first[j] for j in others)])
        names = [params[j] for j in others]
        for vals in chosen:
            try:
                d = apply_point(base, names, vals) if names else base
                gpus, gpu = design_gpus(d, catalog)
                if gpus and gpu is not None:
                    pipeline.resolve_workload(d, catalog, gpus, gpu, {})
            except UsageError as exc:
                point = dict(zip(names, vals), **({"servers": value} if value is not None else {}))
                named = [p for p in params if p in point]
                raise UsageError(f"sweep: the point {_words(named, [point[p] for p in named])} cannot run: "
                                 f"{exc}") from None


def prepare(design: Design, grid: "Grid | str", values: Sequence[float] | None = None, *,
            seed: int | None = None,
            evaluate: Callable[[Design, str, int], dict[str, float]] = engine_point) -> tuple:
    """Check every parameter and value of ``grid`` (a :class:`Grid`, or one parameter with its
    ``values``), before any point runs, and return what :func:`point` takes beside each
    combination (``seed`` None: the design's scenario seed). The first combination is applied
    here, so a parameter the design cannot take fails before any process starts, and every value
    of a global batch or micro-batch is refitted here against the design with the other
    parameters' first values (:func:`_refit`), so a batch no layout can run fails here too; and
    :func:`check_points` checks the combinations that could fail where the first does not (every
    ``servers`` value, the component parameters in each, each combination's refitted workload
    where cheap), naming the one that cannot run. ``evaluate`` must be a module-level function (it is sent to worker processes)."""
    from designer.engine.pipeline import design_seed
    from designer.topology.fileformat import to_dict

    grid = as_grid(grid, values)
    seed = design_seed(design, seed)  # None: the design's scenario seed
    for param, vals in zip(grid.params, grid.values):
        check_values(design, param, vals)  # every value, before any point runs
    check_points(design, grid)  # the combinations that can fail where another does not, named
    first = next(grid.points())
    apply_point(design, grid.params, first)
    for k, param in enumerate(grid.params):
        head, _, tail = param.partition(".")
        name = tail if head == "workload" else param
        if name not in REFIT_ON or len(grid.values[k]) < 2 or (tail and head != "workload"):
            continue
        others = [j for j in range(len(grid.params)) if j != k]
        base = apply_point(design, [grid.params[j] for j in others], [first[j] for j in others]) \
            if others else design
        for value in grid.values[k][1:]:  # the first was refitted above
            # the workload alone changes, so the design is neither copied nor recounted
            _refit({**base.workload, name: value}, base, param, value)
    return (to_dict(design), grid.params, seed, evaluate)


class EvenSample:
    """A bounded, even sample of a numbered stream: the items numbered below ``head``, then those
    whose number past ``head`` is a multiple of k, k doubling whenever more than ``cap`` of them
    are kept (so they span the whole stream evenly, between ``cap / 2`` and ``cap``). It depends on
    the numbers alone, so the same stream gives the same sample however it was computed."""

    def __init__(self, head: int, cap: int) -> None:
        self.head, self.cap, self.every = head, cap, 1
        self._head: list[tuple[int, Any]] = []
        self._rest: list[tuple[int, Any]] = []

    def add(self, index: int, item: Any) -> None:
        if index < self.head:
            self._head.append((index, item))
        elif (index - self.head) % self.every == 0:
            self._rest.append((index, item))
            if len(self._rest) > self.cap:
                self.every *= 2
                self._rest = [p for p in self._rest if (p[0] - self.head) % self.every == 0]

    def items(self) -> list[tuple[int, Any]]:
        """``(number, item)`` kept, in the order added."""
        return self._head + self._rest


class Summary:
    """A bounded sample of a sweep's points, in point order, for the printed table and the app's
    plot (every row goes to ``--out``): the first :data:`HEAD` points; after them an
    :class:`EvenSample` of at most :data:`SAMPLE` (every k-th, spanning the whole sweep); and the :data:`BEST` points with the shortest training time in any offload mode.
    At most HEAD + SAMPLE + BEST points and :data:`NOTES` notes are held, whatever the sweep's
    size. Points must be added in point order (``run_tasks`` yields them so); the sample then
    depends on the points alone, not on the worker count."""

    HEAD = 512
    SAMPLE = 512
    BEST = 5
    NOTES = 100

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.count = 0
        self._sample = EvenSample(self.HEAD, self.SAMPLE)
        self._best: list[tuple[float, int, tuple, dict]] = []
        self._notes: dict[str, None] = {}
        self._more_notes = 0

    def add(self, index: int, values: tuple, row: dict, notes: Sequence[str] = ()) -> None:
        self.count += 1
        for note in notes:
            if note in self._notes:
                continue
            if len(self._notes) < self.NOTES:
                self._notes[note] = None
            else:
                self._more_notes += 1
        self._sample.add(index, (values, row))
        score = min(row[s]["training_time_days"] for s in row)
        if len(self._best) < self.BEST or (score, index) < self._best[-1][:2]:
            bisect.insort(self._best, (score, index, values, row))
            del self._best[self.BEST:]

    def result(self) -> SweepResult:
        kept = dict(self._sample.items())
        kept.update({i: (v, r) for _, i, v, r in self._best})
        order = sorted(kept)
        notes = tuple(self._notes)
        if self._more_notes:
            notes += (f"... and {self._more_notes:,} more such lines",)
        thinned = ""
        if self.count > len(order):
            thinned = (f"{len(order):,} of {self.count:,} points kept: the first {self.HEAD}, then one in "
                       f"every {self._sample.every:,}, and the {self.BEST} with the shortest training time")
        return SweepResult(self.grid.params, tuple(kept[i][0] for i in order),
                           tuple(kept[i][1] for i in order), notes, self.count, thinned)
