"""The best cluster for a target: a search over designs, its Pareto front of cost, training time and
energy (no Qt).

**What is searched.** For a workload and a GPU count, the rail-optimized template
(``designer.topology.templates.rail_optimized``, the DGX SuperPOD layout) is built for every
combination of: GPU server model, adapters (``nic``: ConnectX NICs, host-managed; ``smartnic``:
the same ConnectX run as SmartNICs; ``dpu``: BlueField DPUs on the rails, DPU-offloaded), leaf/spine
switch model and oversubscription. The parallel layout of each server model is the planner's best
(``designer.engine.plan.search``, run once per server model on the non-blocking NIC design: the
layout depends on the GPUs and the NVLink domain, the fabric variants are then run with it).

**Each point** is one ``engine.pipeline.run`` of its design (its seed) and
``services.cost``'s bill and TCO for it: CapEx, lifetime TCO, training time (steady state, no
failures), energy of the run, tokens/s and what they buy per dollar.

**The front.** A point is feasible when it meets the target (training time <= ``days``, CapEx <=
``budget``); the front is the feasible points no other feasible point beats on all of CapEx,
training time and energy (lower is better, ties kept), in point order.

**Where it runs.** ``designer.services.parallel.run_tasks``: a local process pool by default
(``workers`` processes; the target arrives once per worker, each loads the catalog once; a point
is a few template options and a layout, not a design), this process (``workers=1``), or a Dask
cluster (``scheduler="tcp://..."``; the target is scattered to every worker once). The points are
made one at a time and at most a few per worker are in flight; each finished point is handed to
``on_row`` in point order (the CLI streams them to CSV or Parquet,
``designer.services.rowfile``), so a large search never holds every row: only the running front
is kept, and for a chart (``--report``, the app's plot) the bounded sample of :class:`Chart`. Points are numbered before they are sent, so the same target and seed give the same rows,
in the same order, and the same front whatever the worker count.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from designer.errors import UsageError
from designer.services.parallel import run_tasks

ADAPTERS = ("nic", "smartnic", "dpu")
#: CSV columns of a point, in order
#: the type of each column (a Parquet file's schema; ``error`` is empty unless the engine refused the point)
COLUMN_TYPES = {"index": "int", "server": "str", "servers": "int", "adapters": "str", "switch": "str",
                "oversubscription": "float", "tp": "int", "pp": "int", "dp": "int", "cp": "int", "ep": "int",
                "micro_batch": "int", "interleave": "int", "recompute": "bool", "feasible": "bool",
                "error": "str"}  # every other column: "float"
COLUMNS = ("index", "server", "servers", "adapters", "switch", "oversubscription", "tp", "pp", "dp", "cp",
           "ep", "micro_batch", "interleave", "recompute", "feasible", "capex_USD", "tco_USD",
           "training_time_days", "energy_MWh", "tokens_per_s", "tokens_per_USD", "mfu", "iteration_time_s",
           "error")


def columns() -> list[tuple[str, str]]:
    """``(name, type)`` of every column, for ``designer.services.rowfile.row_file``."""
    return [(c, COLUMN_TYPES.get(c, "float")) for c in COLUMNS]


@dataclass(frozen=True)
class Target:
    workload: str
    gpus: int
    days: float | None = None          #: finish within this many days (steady state)
    budget_USD: float | None = None    #: CapEx at most this
    tokens: float | None = None        #: the token budget (None: the workload's own)
    servers: tuple[str, ...] = ("dgx-h100", "hgx-b200")
    adapters: tuple[str, ...] = ADAPTERS
    switches: tuple[str, ...] = ("qm9700", "sn5600")
    oversubscription: tuple[float, ...] = (1.0, 2.0)
    seed: int = 0


@dataclass(frozen=True)
class Point:
    index: int
    server: str
    servers: int
    adapters: str
    switch: str
    oversubscription: float
    layout: dict[str, Any]

    def options(self, catalog: Any) -> dict[str, Any]:
        """rail_optimized options of the point."""
        entry = catalog.get("server", self.server)
        opts: dict[str, Any] = {"servers": self.servers, "server": self.server, "switch": self.switch,
                                "oversubscription": self.oversubscription}
        if self.adapters == "dpu":
            opts["dpu"] = str(entry.get("dpu_model") or "bluefield-3")
        else:
            opts["nic"] = str(entry.get("nic_model") or "connectx-7")
        return opts


def design_of(point: Point, target: Target, catalog: Any):
    """The point's design, with its workload and scenario, as ``optimize --write-front`` saves it."""
    from designer.topology import templates

    from designer.engine import plan

    d = templates.rail_optimized(**point.options(catalog), catalog=catalog)
    d.workload = {"preset": target.workload, **({"tokens": target.tokens} if target.tokens else {})}
    d.workload = plan.apply(d, point.layout)
    d.scenario["offload"] = {"nic": "host", "smartnic": "smartnic", "dpu": "dpu"}[point.adapters]
    d.scenario["seed"] = target.seed
    d.name = (f"{point.servers} x {point.server}, {point.adapters}, {point.switch}, "
              f"{point.oversubscription:g}:1 ({target.workload})")
    return d


def evaluate(point: Point, target: Target, catalog: Any | None = None) -> dict[str, Any]:
    """One point's row (``COLUMNS``); a point the engine refuses gets its message in ``error``."""
    from designer.engine import pipeline
    from designer.services import cost
    from designer.topology.catalog import load_catalog

    catalog = catalog or load_catalog()
    row: dict[str, Any] = {"index": point.index, "server": point.server, "servers": point.servers,
                           "adapters": point.adapters, "switch": point.switch,
                           "oversubscription": point.oversubscription, **_layout_cells(point.layout)}
    try:
        d = design_of(point, target, catalog)
        r = pipeline.run(d, catalog, seed=target.seed)
        book = cost.price_book(d, catalog)
        b = cost.bill(d, catalog, book)
        m = cost.mode_cost(point.adapters, r, b.capex_USD, b, cost.site_of(book, d))
    except UsageError as exc:
        return {**row, "feasible": False, "error": str(exc)}
    row.update(capex_USD=b.capex_USD, tco_USD=m.tco.total_USD, training_time_days=r.training_time_days,
               energy_MWh=r.energy_kwh / 1e3, tokens_per_s=r.tokens_per_s, tokens_per_USD=m.per_USD,
               mfu=r.mfu, iteration_time_s=r.iteration_time_s, error="")
    row["feasible"] = ((target.days is None or r.training_time_days <= target.days)
                       and (target.budget_USD is None or b.capex_USD <= target.budget_USD)
                       and math.isfinite(r.training_time_days))
    return row


def _layout_cells(layout: dict[str, Any]) -> dict[str, Any]:
    return {k: layout.get(k, 1 if k not in ("recompute",) else False)
            for k in ("tp", "pp", "dp", "cp", "ep", "micro_batch", "interleave", "recompute")}


def start_layout(target: Target, catalog: Any, gpus_per_server: int) -> dict[str, Any]:
    """A layout the workload's published global batch divides, for the planner to start from:
    TP inside the server, the fewest pipeline stages whose data-parallel width divides the batch."""
    w = catalog.workload(target.workload)
    batch = int(w.get("global_batch", 0) or 0)
    tp = min(int(w.get("tp", gpus_per_server) or gpus_per_server), gpus_per_server)
    for pp in (int(w.get("pp", 1) or 1), 1, 2, 4, 8, 16, 32, 64):
        if target.gpus % (tp * pp):
            continue
        dp = target.gpus // (tp * pp)
        if batch == 0 or batch % dp == 0:
            return {"tp": tp, "pp": pp}
    raise UsageError(f"--gpus {target.gpus}: no layout of {target.workload} with TP {tp} divides its global "
                     f"batch {batch}; choose a GPU count that is a multiple of {tp} x a divisor of {batch}")


def plan_layouts(target: Target, catalog: Any) -> dict[str, dict[str, Any]]:
    """The planner's best layout per server model (module docstring)."""
    from designer.engine import plan
    from designer.topology import templates

    out = {}
    for server in target.servers:
        entry = catalog.get("server", server)
        per = int(entry["gpu_count"])
        if target.gpus % per:
            raise UsageError(f"--gpus {target.gpus} is not a whole number of {server} servers ({per} GPUs each)")
        d = templates.rail_optimized(servers=target.gpus // per, server=server, catalog=catalog)
        d.workload = {"preset": target.workload, **start_layout(target, catalog, per)}
        res = plan.search(d, catalog, top=1, seed=target.seed)
        if not res.ranked:
            raise UsageError(f"no layout of {target.workload} fits {target.gpus} GPUs of {server}")
        out[server] = {k: v for k, v in res.ranked[0].layout.items()}
    return out


def points(target: Target, layouts: dict[str, dict[str, Any]], catalog: Any) -> Iterator[Point]:
    """The search's points, numbered in ``itertools.product`` order, made one at a time."""
    combos = itertools.product(target.servers, target.adapters, target.switches, target.oversubscription)
    per = {s: int(catalog.get("server", s)["gpu_count"]) for s in target.servers}
    return (Point(i, s, target.gpus // per[s], a, sw, float(o), layouts[s])
            for i, (s, a, sw, o) in enumerate(combos))


def point_count(target: Target) -> int:
    """How many points :func:`points` makes."""
    return math.prod(len(x) for x in (target.servers, target.adapters, target.switches, target.oversubscription))


ADAPTER_WORDS = {"nic": "NIC", "smartnic": "SmartNIC", "dpu": "DPU"}


def target_words(t: Target) -> str:
    """The target as the CLI and the report say it: "gpt3-175b on 1,024 GPUs, within 8 days, CapEx
    at most 60,000,000 USD"."""
    want = [f"{t.workload} on {t.gpus:,} GPUs"]
    if t.days:
        want.append(f"within {t.days:g} days")
    if t.budget_USD:
        want.append(f"CapEx at most {t.budget_USD:,.0f} USD")
    return ", ".join(want)


def layout_words(layout: dict[str, Any]) -> str:
    """A layout as a planner reads it: "TP 8, PP 8, DP 8, CP 2, micro-batch 1, selective recompute"."""
    parts = [f"{k.upper()} {layout[k]}" for k in ("tp", "pp", "dp", "cp", "ep") if layout.get(k, 1) != 1
             or k in ("tp", "pp", "dp")]
    parts.append(f"micro-batch {layout.get('micro_batch', 1)}")
    if layout.get("interleave", 1) != 1:
        parts.append(f"interleave {layout['interleave']}")
    if layout.get("recompute"):
        parts.append(f"{layout.get('recompute_granularity', 'full')} recompute")
    return ", ".join(parts)


def dominates(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("capex_USD", "training_time_days", "energy_MWh")
    return all(a[k] <= b[k] for k in keys) and any(a[k] < b[k] for k in keys)


@dataclass
class Front:
    """The running Pareto front of feasible rows."""

    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        if not row.get("feasible") or row.get("error"):
            return
        if any(dominates(r, row) for r in self.rows):
            return
        self.rows = [r for r in self.rows if not dominates(row, r)] + [row]
        self.rows.sort(key=lambda r: r["index"])


@dataclass
class Outcome:
    target: Target
    layouts: dict[str, dict[str, Any]]
    evaluated: int
    feasible: int
    front: list[dict[str, Any]]
    cancelled: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"target": asdict(self.target), "layouts": self.layouts, "evaluated": self.evaluated,
                "feasible": self.feasible, "front": self.front, "cancelled": self.cancelled}


def check(target: Target, catalog: Any) -> None:
    """Refuse a target the search cannot run, saying which option to change."""
    if target.gpus < 1:
        raise UsageError("--gpus must be 1 or more")
    for a in target.adapters:
        if a not in ADAPTERS:
            raise UsageError(f"--adapters {a}: choose from {', '.join(ADAPTERS)}")
    for s in target.servers:
        if s not in catalog.ids("server"):
            raise UsageError(f"--server-models {s}: not a catalog server ({', '.join(catalog.ids('server'))})")
    for s in target.switches:
        if s not in catalog.ids("switch"):
            raise UsageError(f"--switches {s}: not a catalog switch ({', '.join(catalog.ids('switch'))})")
    if not all(math.isfinite(x) and x >= 1 for x in target.oversubscription):  # the CLI's check, the app's too
        raise UsageError("--oversubscription values must be 1 or more")


def optimize_steps(target: Target, catalog: Any, *, workers: int | None = None, scheduler: Any = None,
                   cancel: threading.Event | None = None) -> Iterator[tuple]:
    """The search as a generator (the app runs it in a worker thread): ``("layouts", layouts,
    points)`` once the planner is done, ``("row", row, done, total)`` per finished point, then
    ``("result", Outcome)``. Closing the generator stops the points not started."""
    check(target, catalog)
    layouts = plan_layouts(target, catalog)
    total = point_count(target)
    yield ("layouts", layouts, total)
    front, seen, feasible = Front(), 0, 0
    for _, row in run_tasks(evaluate, points(target, layouts, catalog), target, workers=workers,
                            scheduler=scheduler, cancel=cancel):
        seen += 1
        feasible += bool(row.get("feasible"))
        front.add(row)
        yield ("row", row, seen, total)
    yield ("result", Outcome(target, layouts, seen, feasible, front.rows, cancelled=seen < total))


#: designs a chart of the search (the ``--report`` PDF, the app's Run -> Optimize plot) shows each;
#: beyond that an even sample of between PLOTTED / 2 and PLOTTED more (:class:`Chart`)
PLOTTED = 20_000


class Chart:
    """What a chart of a search keeps, in the CLI's ``--report`` and the app's plot alike: the
    running Pareto front (:class:`Front`) and, of the designs run, every one numbered below
    :data:`PLOTTED`, then an even sample (``designer.engine.sweep.EvenSample``: one in every k,
    k doubling, at most PLOTTED more), each as ``(days, CapEx in M USD, meets the target)``.
    So it holds at most 2 x PLOTTED points plus the front whatever the search's size (every row
    goes to ``--out``, not to memory), and the sample depends on the point numbers alone, not on
    the worker count. A design the engine refused (``error``) is not charted."""

    def __init__(self, cap: int | None = None) -> None:
        from designer.engine.sweep import EvenSample

        cap = PLOTTED if cap is None else cap
        self.front = Front()
        self.count = 0  #: designs added (charted or not)
        self._sample = EvenSample(cap, cap)

    def add(self, row: dict[str, Any]) -> None:
        self.count += 1
        self.front.add(row)
        if not row.get("error"):
            self._sample.add(int(row["index"]), (float(row["training_time_days"]), float(row["capex_USD"]) / 1e6,
                                                 bool(row["feasible"])))

    def points(self) -> list[tuple[float, float, bool]]:
        """``(days, CapEx M USD, meets the target)`` of the designs kept, in point order."""
        return [p for _, p in self._sample.items()]

    @property
    def sampled(self) -> bool:
        """The chart shows a sample, not every design run."""
        return self._sample.every > 1

    def shown(self, sep: str = " ") -> str:
        """What the chart shows, as the report's chart and the app's plot say it (``sep`` before
        "and the Pareto front": the app breaks the line there)."""
        if not self.sampled:
            return "Every design run"
        return (f"An even sample of the designs run ({len(self.points()):,} of {self.count:,}: the first "
                f"{self._sample.head:,}, then one in every {self._sample.every:,}){sep}and the Pareto front")

    def title(self) -> str:
        """The report chart's title: :meth:`shown`, then the axes."""
        return f"{self.shown()}: training time against CapEx"


@dataclass
class Written:
    """What :func:`steps_to_file` has written, read by the caller from another thread: the rows
    so far, and ``closed`` once the file is in place (or removed, after an error) and no more
    rows come."""

    rows: int = 0
    closed: bool = False


def steps_to_file(target: Target, catalog: Any, path: str, *, workers: int | None = None,
                  scheduler: Any = None, cancel: threading.Event | None = None,
                  written: Written | None = None, what: str = "--out") -> Iterator[tuple]:
    """:func:`optimize_steps`, each row also written to ``path`` (``.csv`` or ``.parquet``, in
    search order, through ``designer.services.rowfile.row_file``: what ``optimize --out`` writes).
    The file appears under its name when the search ends; closing the generator (the app's
    Cancel) also keeps the rows written so far under that name, as Ctrl-C does in the CLI.
    ``written`` (a :class:`Written` the caller holds) follows the rows as they are written;
    ``what`` names the file in a message (a full disk, a name that is not .csv or .parquet)."""
    from designer.services.rowfile import row_file

    state = written if written is not None else Written()
    steps = optimize_steps(target, catalog, workers=workers, scheduler=scheduler, cancel=cancel)
    try:
        with row_file(path, columns(), what=what) as out:
            try:
                for item in steps:
                    if item[0] == "row":
                        out.write(item[1])
                        state.rows = out.count
                    yield item
            except GeneratorExit:
                # no more points handed out; the block then ends normally, so the rows are kept
                steps.close()  # type: ignore[attr-defined]  # a generator
                return
    finally:
        state.closed = True


def optimize(target: Target, catalog: Any, *, workers: int | None = None, scheduler: Any = None,
             on_row: Callable[[dict[str, Any]], None] | None = None,
             progress: Callable[[int, int], None] | None = None,
             cancel: threading.Event | None = None) -> Outcome:
    """Run :func:`optimize_steps` to the end (``on_row`` gets every row, ``progress`` the count)."""
    outcome = None
    for item in optimize_steps(target, catalog, workers=workers, scheduler=scheduler, cancel=cancel):
        if item[0] == "row":
            if on_row:
                on_row(item[1])
            if progress:
                progress(item[2], item[3])
        elif item[0] == "result":
            outcome = item[1]
    assert outcome is not None
    return cast("Outcome", outcome)


def point_of(row: dict[str, Any], layouts: dict[str, dict[str, Any]]) -> Point:
    """The point a row was made from (to write its design)."""
    return Point(int(row["index"]), str(row["server"]), int(row["servers"]), str(row["adapters"]),
                 str(row["switch"]), float(row["oversubscription"]), layouts[str(row["server"])])
