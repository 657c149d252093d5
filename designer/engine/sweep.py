"""Sweeps: the engine run over values of one design parameter, host-managed and DPU-offloaded.

A parameter is named as
  ``servers``               regenerate the design from the template recorded in ``design.meta``
  ``workload.NAME`` / NAME  a numeric workload setting (``global_batch``, ``tokens`` ...)
  ``scenario.NAME`` / NAME  a numeric scenario setting (``tenants``, ``checkpoint_interval_s`` ...)
  ``KIND.FIELD``            a numeric field of every component of a kind (``gpu_server.gpu_count``)
  ``ID.FIELD``              a numeric field of one component (``srv1.gpu_count``)

Every value is one point: the design with the value applied, run in the three offload modes of
``compare`` (host-managed, SmartNIC-offloaded, DPU-offloaded). This module holds the pure parts:
:func:`prepare` checks every value and makes the shared object (the design as a plain dict, the
parameter, the seed), :func:`point` runs one value against it. Spreading points over processes or a
Dask cluster is :mod:`designer.services.sweeping`'s (the engine imports no services). Each point gets
the same design dict and the same seed, so a point's result does not depend on which worker ran it
or in what order: results are identical for any worker count or executor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Callable, Sequence

from designer.engine.compare import MODES, SCENARIO_SETTINGS
from designer.engine.workload import Workload, whole_batch
from designer.errors import UsageError
from designer.topology.design import SCENARIO_DEFAULTS, Design
from designer.topology.kinds import FIELDS, KINDS

#: the offload modes of every point (those of ``dpu-designer compare``, in its order)
SCENARIOS = MODES
#: figures kept from each engine result (keys of ``Result.to_json()``)
METRICS = ("training_time_days", "mfu", "iteration_time_s", "tflops_per_gpu", "tokens_per_s")

_NUMERIC = ("int", "float")
#: workload settings a sweep may vary (the numeric fields of ``Workload``)
WORKLOAD_NUMBERS = tuple(f.name for f in fields(Workload) if f.type in _NUMERIC)


@dataclass(frozen=True)
class SweepResult:
    param: str
    values: tuple[float, ...]
    #: ``rows[i][scenario][metric]`` for ``values[i]``
    rows: tuple[dict[str, dict[str, float]], ...]
    #: what was changed beyond the parameter (a layout refitted to a changed global batch)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"param": self.param, "scenarios": list(SCENARIOS), "metrics": list(METRICS),
                "points": [{"value": v, **row} for v, row in zip(self.values, self.rows)],
                "notes": list(self.notes)}

    def series(self, scenario: str, metric: str) -> list[float]:
        return [row[scenario][metric] for row in self.rows]


#: most values one sweep takes (derived: each value is three engine runs, a few seconds each on a
#: large design; 256 points already resolve any curve a plot of the sweep can show)
MAX_VALUES = 256


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
    if len(out) > MAX_VALUES:
        raise UsageError(f"--values: {len(out):,} values given; at most {MAX_VALUES} (each is three "
                         "engine runs); sweep a coarser grid")
    return out


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


def _refit(workload: dict, design: Design, param: str, value: float,
           gpus: int | None = None) -> str | None:
    """:func:`designer.engine.fit.refit_for_batch` on ``workload`` (in place), its line prefixed
    with the swept value."""
    from designer.engine.fit import refit_for_batch
    from designer.topology.catalog import load_catalog

    note = refit_for_batch(workload, design, load_catalog(), gpus)
    return f"{param} = {value:g}: {note}" if note else None


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
        raise UsageError(f"--param {param}: '{name}' is not a numeric workload setting "
                         f"(known: {', '.join(WORKLOAD_NUMBERS)}; scenario: {', '.join(SCENARIO_DEFAULTS)})")
    if section == "scenario" and name not in SCENARIO_DEFAULTS:
        raise UsageError(f"--param {param}: unknown scenario setting '{name}' "
                         f"(known: {', '.join(SCENARIO_DEFAULTS)})")
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


def engine_point(design: Design, scenario: str, seed: int) -> dict[str, float]:
    """The figures :data:`METRICS` of one engine run of ``design`` in offload mode ``scenario``
    (``designer.engine.compare.SCENARIO_SETTINGS``), the same run ``dpu-designer compare`` makes."""
    from designer.engine import pipeline
    from designer.topology.catalog import load_catalog

    data = pipeline.run(design, load_catalog(), scenario=dict(SCENARIO_SETTINGS[scenario]), seed=seed).to_json()
    return {m: float(data[m]) for m in METRICS}


#: (the shared design dict, the design decoded from it): a worker decodes the design once, not per point
_decoded: tuple[Any, Design] | None = None


def point(value: float, shared: tuple) -> dict[str, dict[str, float]]:
    """One point: ``evaluate(design with param = value, mode, seed)`` for every mode of
    :data:`SCENARIOS`. ``shared`` is :func:`prepare`'s ``(design dict, param, seed, evaluate)``,
    the same for every point (sent once per worker); this function is pure, so a point's result
    is the same wherever and in whatever order it runs."""
    global _decoded
    design_dict, param, seed, evaluate = shared
    if _decoded is None or _decoded[0] is not design_dict:
        from designer.topology.fileformat import from_dict

        _decoded = (design_dict, from_dict(design_dict, source="<sweep>"))
    design = apply_param(_decoded[1], param, value)  # a copy: the decoded design is never changed
    return {s: evaluate(design, s, seed) for s in SCENARIOS}


def prepare(design: Design, param: str, values: Sequence[float], *, seed: int | None = None,
            evaluate: Callable[[Design, str, int], dict[str, float]] = engine_point,
            ) -> tuple[tuple, tuple[str, ...]]:
    """Check the parameter and every value, and return ``(shared, notes)``: ``shared`` is what
    :func:`point` takes beside each value (``seed`` None: the design's scenario seed), ``notes``
    the lines saying what changed beyond the parameter (a layout refitted to a changed batch).
    ``evaluate`` must be a module-level function (it is sent to worker processes)."""
    from designer.engine.pipeline import design_seed
    from designer.topology.fileformat import to_dict

    seed = design_seed(design, seed)  # None: the design's scenario seed
    if not values:
        raise UsageError("sweep: give at least one value")
    check_values(design, param, values)  # every value, before any point runs
    notes: list[str] = []
    apply_param(design, param, values[0], notes)  # bad parameter names fail here, before any process starts
    name = param.partition(".")[2] or param
    if name in REFIT_ON and param.partition(".")[0] in ("workload", name) and len(values) > 1:
        # the refit lines of the other values, said here (each point refits the same way in its
        # process); the workload alone changes, so the design is neither copied nor recounted
        from designer.engine.fit import design_gpus
        from designer.topology.catalog import load_catalog

        gpus, _ = design_gpus(design, load_catalog())
        for value in values[1:]:
            note = _refit({**design.workload, name: value}, design, param, value, gpus)
            if note:
                notes.append(note)
    return (to_dict(design), param, seed, evaluate), tuple(notes)
