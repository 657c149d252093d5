"""Best-layout search: the fastest parallel layout of the design's workload that fits in GPU memory.

Like Calculon (Isaev et al., "Calculon: a Methodology and Tool for High-Level Codesign of Systems
and Large Language Models", SC'23), the search enumerates every legal layout of the job's GPUs:
tensor (tp), pipeline (pp), data (dp) parallelism, context (cp) and expert (ep) parallelism where
the workload model has them (ep only for a mixture-of-experts model), the micro-batch, the
interleaved pipeline's virtual stages (each also with its sends/receives overlapped, as the
published Megatron/NeMo GPT-3 175B recipe runs it: :func:`_schedules`) and activation recomputation (none, full, selective where
the model knows it), for the workload's fixed global batch on all of the job's GPUs
(tp·cp·pp·dp = GPUs) and, when the design's own layout runs on fewer (a batch that no layout of
all of them splits: 385 sequences on 8,192 GPUs), on as many as it uses too (:func:`pools`), so
that it is ranked with the others. It runs in three steps, cheapest first:

1. **Rules** (no model run): tp divides the heads (and the key/value heads, as Megatron-Core's
   query groups require) and either divides a server's NVLink domain or spans whole ones; the
   global batch splits into whole micro-batches per replica; an interleaved schedule needs its
   micro-batches a multiple of pp (Megatron-LM's interleaved 1F1B); pp·v at most the layers plus
   an embedding-only and a loss-only chunk (``workload.MAX_LAYERLESS_CHUNKS``); whatever else
   ``workload.from_dict`` refuses.
2. **Memory**: ``workload.model_state_GB`` and ``workload.memory_per_gpu_GB`` against the GPU's
   memory (``workload.gpu_memory_GB``: the catalog's ``memory_GB`` in GiB, as vendors quote it);
   a layout over it is dropped before anything is timed.
3. **Time**: every layout that fits is estimated with the engine's own compute and timing stages
   (``workload.compute``, ``traffic.volumes``, ``timing.timing``) on communicator shapes taken
   from the real placement of its ranks on the design's servers, at each rail's line rate
   (``collectives.NET_EFFICIENCY``) on an uncongested fabric, without SHARP and without the
   resources stage. The ``evaluate`` best estimates (and the design's own layout) then run through
   the full engine (``pipeline.run``: routing on the drawn fabric, congestion, SHARP, host CPU,
   DPUs, storage, stragglers, checkpoints), which gives the ranking. Placements are cached: the
   layouts that differ only in micro-batch, interleave or recomputation share one.

:func:`search_steps` is a generator that yields progress (the GUI runs it in a worker thread and
can cancel between two yields); :func:`search` runs it to the end.

**Where the engine runs.** Each engine run is :func:`engine_run` ``(layout, shared)``, a pure
function of the layout and of ``shared`` (:class:`Shared`: the design as a dict, the catalog, the
workload dict, the seed), the same for every run. ``search_steps(..., runner=...)`` hands the
runs to ``runner(func, items, shared)``, an iterator of ``(index, result)`` in any order (the
service layer passes ``designer.services.parallel.run_tasks``: all local cores or a Dask cluster,
the design sent once per worker); without one they run here, one after the other. The runs go
in two rounds whose members depend only on estimates and on the first round's engine times,
never on the order in which results arrive, and results are applied in layout order: the same
ranking for any worker count.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Generator, Iterator, cast

from designer.engine import collectives as coll
from designer.engine.cache import EngineCache
from designer.engine.workload import (MAX_LAYERLESS_CHUNKS, Workload, compute, from_dict, gpu_memory_GB, memory_per_gpu_GB,
                                      model_state_GB)
from designer.errors import UsageError

#: micro-batch sizes tried (each must divide global batch / dp)
MICRO_BATCHES = (1, 2, 4, 8, 16)
#: virtual pipeline stages per GPU tried when pp > 1 (Megatron-LM's interleaved schedule)
INTERLEAVES = (1, 2, 3, 4, 6, 8)
#: context-parallel sizes tried (ring attention; each rank holds 2 of 2·cp sequence chunks)
CP_SIZES = (1, 2, 4, 8, 16)
#: the full engine runs at least this many layouts (``evaluate`` default: max(this, 2·top))
MIN_EVALUATED = 6
#: with a bound still open, the engine runs at most this many times ``evaluate`` layouts
BOUND_RUNS = 2
#: layouts estimated between two progress reports (a cancel takes effect at the next one)
ESTIMATES_PER_STEP = 250
#: workload fields a layout sets (the rest of the workload stays as the design has it)
LAYOUT_FIELDS = ("tp", "cp", "pp", "dp", "ep", "micro_batch", "interleave", "pp_overlap", "recompute",
                 "recompute_granularity")

#: why a layout was left out, in the order the search applies the rules (keys of ``dropped``)
REASONS = {
    "heads": "tp does not divide the attention heads (or key/value heads)",
    "nvlink": "tp neither divides a server's NVLink domain nor spans whole servers",
    "batch": "the global batch does not split into whole micro-batches per replica",
    "interleave": "interleaving needs micro-batches a multiple of pp and at most layers + 2 stages",
    "rules": "refused by the workload rules",
    "model_state": "weights, gradients and optimizer state alone exceed GPU memory",
    "memory": "model state plus activations exceed GPU memory",
    "estimate": "fit in memory, but their estimate ranks below the layouts run through the engine",
    "engine": "the engine refused the layout on this design",
}


@dataclass(eq=False)
class Candidate:
    """One layout and its figures. ``estimate_s``: the quick estimate (step 3); the ``engine``
    figures are those of ``pipeline.run`` (None when the layout was not run)."""

    layout: dict[str, Any]
    memory_GB: float | None
    state_GB: float | None
    estimate_s: float
    current: bool = False  #: the design's own layout
    iteration_time_s: float | None = None
    mfu: float | None = None
    tflops_per_gpu: float | None = None
    tokens_per_s: float | None = None
    samples_per_s: float | None = None
    training_time_days: float | None = None
    breakdown_s: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  #: why the engine refused it
    key: tuple = ()  #: (tp, cp, pp, dp, ep): the placement the layout shares with others

    @property
    def label(self) -> str:
        return layout_label(self.layout)

    @property
    def gpus(self) -> int:
        """GPUs the layout runs on: tp·cp·pp·dp."""
        return layout_gpus(self.layout)

    def to_json(self) -> dict[str, Any]:
        return {"layout": dict(self.layout), "label": self.label, "gpus": self.gpus,
                "current": self.current,
                "iteration_time_s": self.iteration_time_s, "mfu": self.mfu,
                "tflops_per_gpu": self.tflops_per_gpu, "tokens_per_s": self.tokens_per_s,
                "samples_per_s": self.samples_per_s, "training_time_days": self.training_time_days,
                "memory_per_gpu_GB": self.memory_GB, "model_state_GB": self.state_GB,
                "estimate_s": self.estimate_s, "breakdown_s": dict(self.breakdown_s),
                "warnings": list(self.warnings), "error": self.error}


@dataclass
class PlanResult:
    """Ranked layouts (fastest first, by the engine's iteration time) and what was left out."""

    gpus: int  #: GPUs of one job
    design_gpus: int
    memory_cap_GB: float
    workload: str
    searched: int  #: layouts enumerated
    fit: int  #: layouts that pass the rules and fit in memory
    ranked: list[Candidate]  #: every layout run through the engine, fastest first
    top: int
    dropped: Counter  #: reason key (``REASONS``) -> layouts
    examples: dict[str, str]  #: reason key -> one dropped layout's label and figure
    current: Candidate | None = None
    seconds: float = 0.0
    current_note: str | None = None  #: why the design's own layout is not ranked, if it is not
    #: layouts not run whose estimate (a lower bound) is below the best engine time: 0 means
    #: none of them can beat the best
    unsettled: int = 0

    @property
    def best(self) -> Candidate | None:
        return next((c for c in self.ranked if c.iteration_time_s is not None), None)

    def groups(self) -> list[list[Candidate]]:
        """The layouts run through the engine, fastest first, one group per distinct outcome: a
        layout that is the same as an earlier one (the same :data:`LAYOUT_FIELDS`, cp/ep/interleave
        1 when absent, no recompute granularity without recompute) or that the engine gives the
        very same figures (iteration time and its breakdown, memory, throughput: e.g. cp2 dp32 mb1
        and cp4 dp16 mb2, the same tokens per GPU and the same ranks per all-reduce) joins the
        group of the first; its first layout stands for it. A list of five alike rows tells a
        planner nothing the first does not."""
        out: list[list[Candidate]] = []
        for c in (c for c in self.ranked if c.iteration_time_s is not None):
            group = next((g for g in out if _same_layout(g[0].layout, c.layout)
                          or _same_figures(g[0], c)), None)
            if group is None:
                out.append([c])
            else:
                group.append(c)
        return out

    def alike(self, c: Candidate) -> list[Candidate]:
        """The other layouts of ``c``'s group (:meth:`groups`) when ``c`` stands for it, else []."""
        return next((g[1:] for g in self.groups() if g[0] is c), [])

    def rank(self, c: Candidate) -> int:
        """``c``'s place among the distinct outcomes (:meth:`groups`), 1 for the fastest."""
        groups = self.groups()
        return next((i for i, g in enumerate(groups, 1) if c in g), len(groups) + 1)

    @property
    def shown(self) -> list[Candidate]:
        """The ``top`` fastest distinct outcomes (the first layout of each of :meth:`groups`),
        plus the design's own layout when it ranks below them."""
        groups = self.groups()
        out = [g[0] for g in groups[:self.top]]
        mine = self.current
        if mine is not None and mine.iteration_time_s is not None and not any(
                mine in g for g in groups[:self.top]):
            out.append(mine)
        return out

    def to_json(self) -> dict[str, Any]:
        best = self.best
        return {"workload": self.workload, "gpus": self.gpus, "design_gpus": self.design_gpus,
                "memory_per_gpu_GB_available": self.memory_cap_GB, "searched": self.searched,
                "fit_in_memory": self.fit, "evaluated": len(self.ranked),
                "best": dict(best.layout) if best else None,
                "layouts": [{"rank": self.rank(c), **c.to_json(), "same_figures": [a.label for a in self.alike(c)]}
                            for c in self.shown],
                "current": self.current.to_json() if self.current else None,
                "current_note": self.current_note,
                "unsettled": self.unsettled,
                "dropped": {k: {"layouts": n, "why": REASONS[k], "example": self.examples.get(k, "")}
                            for k, n in self.dropped.items()},
                "seconds": self.seconds}


def layout_label(layout: dict[str, Any]) -> str:
    """``tp8 pp4 dp64 mb1 v2 rc=full`` (cp/ep shown when above 1)."""
    parts = [f"tp{layout['tp']}"]
    if layout.get("cp", 1) > 1:
        parts.append(f"cp{layout['cp']}")
    parts += [f"pp{layout['pp']}", f"dp{layout['dp']}"]
    if layout.get("ep", 1) > 1:
        parts.append(f"ep{layout['ep']}")
    parts += [f"mb{layout['micro_batch']}", f"v{layout['interleave']}"]
    if layout.get("pp_overlap"):
        parts.append("p2p-overlap")
    parts.append(f"rc={recompute_label(layout)}")
    return " ".join(parts)


def layout_gpus(layout: dict[str, Any]) -> int:
    """tp·cp·pp·dp of a layout (expert parallelism is carved out of cp·dp)."""
    return cast(int, layout["tp"] * layout.get("cp", 1) * layout["pp"] * layout["dp"])


def recompute_label(layout: dict[str, Any]) -> str:
    if not layout.get("recompute"):
        return "none"
    return cast(str, layout.get("recompute_granularity", "full"))


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def workload_data(design, catalog) -> dict[str, Any]:
    """The design's workload as one dict: its catalog preset's fields, then the design's own."""
    from designer.engine import pipeline

    return pipeline.workload_data(design, catalog)


def _job(design, catalog, cache: EngineCache):
    """Servers, GPUs of one job and the job's GPU figures, as ``pipeline.run`` sets them up."""
    from designer.engine import network as net
    from designer.engine.placement import job_servers, servers_of

    servers = servers_of(design, catalog, net.fabric_of(design.topology, cache))
    if not servers:
        raise UsageError("the design has no GPU server; add one before searching for a layout")
    jobs = int((design.scenario or {}).get("tenants", 1) or 1)
    split = job_servers(len(servers), jobs, (design.scenario or {}).get("tenant_placement", "packed"))
    job_gpus = min(sum(servers[int(i)].gpus for i in idx) for idx in split)
    used = [servers[int(i)] for i in split[0]]
    return servers, used, job_gpus


def _layout_space(w0: Workload, pool: int, domain: int, names: set[str]) -> Iterator[dict[str, Any]]:
    """Every (tp, cp, pp, dp, ep) with tp·cp·pp·dp = pool, then micro-batch, interleave and
    recomputation. Only sizes the workload model has are varied (cp, ep, selective recompute)."""
    transformer = w0.kind == "transformer"
    tps = [d for d in _divisors(pool) if d <= max(domain, 1) * 8] if transformer else [1]
    cps = [c for c in CP_SIZES if pool % c == 0] if transformer and "cp" in names else [1]
    moe = "ep" in names and getattr(w0, "experts", 0) > 0
    rcs: list[tuple[bool, str | None]] = [(False, None), (True, "full")] if transformer else [(w0.recompute, None)]
    if transformer and "recompute_granularity" in names:
        rcs.append((True, "selective"))
    for tp in tps:
        for cp in cps:
            if pool % (tp * cp):
                continue
            rest = pool // (tp * cp)
            pps = [p for p in _divisors(rest) if p <= w0.layers] if transformer else [1]
            for pp in pps:
                dp = rest // pp
                eps = [e for e in _divisors(dp * cp) if w0.experts % e == 0] if moe else [1]
                for ep in eps:
                    for mb in MICRO_BATCHES:
                        for v, ov in _schedules(w0, pp, names):
                            for rc, gran in rcs:
                                lay: dict[str, Any] = {"tp": tp, "pp": pp, "dp": dp, "micro_batch": mb,
                                                       "interleave": v, "recompute": rc}
                                if ov is not None:
                                    lay["pp_overlap"] = ov
                                if "cp" in names:
                                    lay["cp"] = cp
                                if "ep" in names:
                                    lay["ep"] = ep
                                if gran is not None:
                                    lay["recompute_granularity"] = gran
                                yield lay


def _schedules(w0: Workload, pp: int, names: set[str]) -> list[tuple[int, bool | None]]:
    """The pipeline schedules tried for ``pp`` stages: (virtual stages v, ``pp_overlap``).

    Interleaving (``INTERLEAVES``) when pp > 1. The overlap of the pipeline's send/receive with
    the neighbouring micro-batches' compute (Megatron-Core ``overlap_p2p_comm``) belongs to the
    interleaved schedule: NeMo's "Communication Overlap" guide (docs/source/features/
    optimizations/communication_overlap.rst, "Pipeline-parallel Communication Overlap") supports
    it only with virtual pipelining, where the p2p traffic grows with v and "cancels off the
    reduced pipeline bubbles", and names its GPT-3 175B training recipe as the one that uses it
    (NeMo-Framework-Launcher conf/training/gpt3/175b.yaml: tp4 pp8, virtual pipeline 12,
    ``overlap_p2p_comm: True``, ``batch_p2p_comm: False``); Megatron-LM's training arguments
    turn it on by default (``--no-overlap-p2p-communication`` turns it off) and off for the
    non-interleaved schedule. So an interleaved layout is tried with the overlap on as well as
    with the workload's own setting (a preset of a run without it, SC'21's, stays comparable);
    a non-interleaved one keeps the workload's setting. ``pp_overlap`` is None for the
    workload's own setting (the layout does not set it, so ``apply`` leaves the workload's as it
    is) and True for the overlap the search adds. The pair with the overlap is never slower in
    the engine (``timing.pp_dim``: exposed max(0, sends - one micro-batch's compute) <= sends)
    and needs no more memory: it is ranked, not preferred, by the same estimate and engine runs."""
    if pp <= 1:
        return [(1, None)]
    adds = "pp_overlap" in names and not w0.pp_overlap
    return [(v, ov) for v in INTERLEAVES for ov in ((None, True) if adds and v > 1 else (None,))]


def _rule(w0: Workload, lay: dict[str, Any], domain: int) -> str | None:
    """The first cheap rule the layout breaks (a ``REASONS`` key), or None."""
    tp = lay["tp"]
    if w0.kind == "transformer":
        kv = w0.kv_heads or w0.heads
        if w0.heads % tp or (not getattr(w0, "kv_lora_rank", 0) and kv % tp):
            return "heads"
        if domain > 1 and domain % tp and tp % domain:
            return "nvlink"
    if w0.global_batch % (lay["dp"] * lay["micro_batch"]):
        return "batch"
    v, pp = lay["interleave"], lay["pp"]
    if v > 1:
        m = w0.global_batch // (lay["dp"] * lay["micro_batch"])
        if m % pp or pp * v > w0.layers + MAX_LAYERLESS_CHUNKS:
            return "interleave"
    return None


def _shape_of(pl, dim: str, size: int, srv, line_GBps: float, sharp: bool) -> coll.GroupShape:
    """An uncongested communicator of ``dim`` on placement ``pl`` (``pipeline._group_shape``
    without the network stage: every rank gets its rail's line rate × NET_EFFICIENCY, a NIC per
    rank up to the server's rails, and SHARP one switch deep where any switch could reduce; each
    at least as fast as the engine's shape of the same group, so the estimate bounds it)."""
    if size <= 1 or dim not in pl.groups:
        nodes = 1
    else:
        nodes = pl.nodes_spanned(dim)
    per_node = max(1, size // nodes)
    nvlink = float(srv.gpu.get("nvlink_GBps") or 0.0) if srv.nvlink_domain >= min(per_node, size) \
        and srv.nvlink_domain > 1 else 0.0
    gen = int(srv.gpu.get("nvlink_gen") or 0)  # the catalog's generation, not one guessed from the rate
    nvls = bool(srv.nvswitch and gen >= 4)
    rails = max(1, len(srv.rails))
    return coll.GroupShape(ranks=max(1, size), nodes=nodes, nvlink_GBps=nvlink, pcie_gen=srv.pcie_gen,
                           nvswitch=srv.nvswitch, nvls=nvls, nvlink_gen=gen, net_GBps=line_GBps * coll.NET_EFFICIENCY,
                           net_line_GBps=line_GBps, nics_per_node=min(per_node, rails),
                           sharp=sharp, tree_depth=1, switch_latency_us=0.0)


def _estimate(w: Workload, gpu: dict[str, Any], shapes: dict[str, coll.GroupShape]) -> float:
    """Iteration seconds from the engine's compute and timing stages on ``shapes``."""
    from designer.engine import timing
    from designer.engine import traffic as tr
    from designer.engine.workload import bubble_s

    ct = compute(w, gpu)
    try:
        out = timing.timing(w, ct, tr.volumes(w), shapes)
        return float(out[2])
    except (KeyError, TypeError, ValueError, UsageError):
        # a timing stage that wants what this estimate does not know: compute and bubble only
        return w.micro_batches * ct.micro_batch_s + bubble_s(w, ct.micro_batch_s)


@dataclass
class _Space:
    """What the search knows before it estimates: the job's servers and GPUs, the workload as the
    design gives it (``w0``; ``refused``: why the design's own layout is illegal), the GPUs
    searched (``pool``), the GPU memory, the design's layout and the shape inputs."""

    servers: list
    used: list  #: the first job's servers
    job_gpus: int
    gpu: dict[str, Any]
    domain: int  #: the smallest NVLink domain of a server
    data: dict[str, Any]  #: the design's workload dict
    w0: Workload
    refused: str | None
    pool: int
    cap: float  #: GPU memory (GB)
    names: set[str]  #: the Workload's field names
    current: dict[str, Any]  #: the design's layout
    base: dict[str, Any]  #: the workload dict every layout is set on
    line: float  #: the first rail's line rate (GB/s)
    order: str | None  #: the rank order of the design's workload (``_order``)
    sharp: bool
    within: bool = False  #: the workload's ``ep_within_domain`` (``placement.usable_gpus``)


@dataclass
class _Tally:
    """What the estimate pass finds: layouts dropped (by reason, with an example each), the
    layouts that fit, the uncongested shapes per placement, and the note on the design's own."""

    current_note: str | None
    dropped: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    fits: list[Candidate] = field(default_factory=list)
    placements: dict[tuple, Any] = field(default_factory=dict)
    searched: int = 0


#: ``runner(func, items, shared)``: ``(index, func(items[index], shared))`` for every item, in any order
Runner = Callable[[Callable[[Any, Any], Any], list, Any], Iterator[tuple[int, Any]]]


def in_order(func: Callable[[Any, Any], Any], items: list, shared: Any) -> Iterator[tuple[int, Any]]:
    """The runner without workers: every item in this process, in item order."""
    for i, item in enumerate(items):
        yield i, func(item, shared)


def search_steps(design, catalog, *, top: int = 5, evaluate: int | None = None,
                 seed: int | None = None, cache: EngineCache | None = None,
                 runner: Runner | None = None) -> Iterator[tuple]:
    """The search (module docstring) as a generator: ``("progress", stage, done, total)`` with
    stage "estimate" or "engine", then ``("result", PlanResult)``. ``cache``: the caller's
    :class:`~designer.engine.cache.EngineCache` for the estimates (None: one for this search).
    ``runner``: where the engine runs go (module docstring; None: :func:`in_order`)."""
    if top < 1:
        raise UsageError(f"--top must be 1 or more, got {top}")
    started = time.perf_counter()
    cache = cache if cache is not None else EngineCache()
    sp = _space(design, catalog, cache)
    tally = _Tally(current_note=(
        f"the design's layout {layout_label({**sp.current, 'dp': sp.w0.dp})} is not among the "
        f"layouts searched ({' and '.join(map(str, pools(sp)))} GPUs, micro-batch "
        f"{', '.join(map(str, MICRO_BATCHES))}, interleave {', '.join(map(str, INTERLEAVES))})"))
    if sp.refused:
        sp.current, tally.current_note = {}, f"the design's own layout is refused: {sp.refused}"
    yield from _estimates(sp, tally)
    if not tally.fits:
        raise UsageError(_nothing_fits(tally.dropped, tally.examples, sp.pool, sp.cap))
    tally.fits.sort(key=lambda c: c.estimate_s)
    from designer.topology.fileformat import to_dict

    shared = Shared(to_dict(design), catalog, sp.base, seed)

    def run(cands: list[Candidate], k: int) -> Iterator[int]:
        return _run_round(cands, shared, runner or in_order, tally)

    try:
        queue, mine, best = yield from _engine_runs(tally, top, evaluate, run)
    finally:
        _forget(shared.design)
    yield ("result", _plan_result(sp, tally, queue, mine, best, top, time.perf_counter() - started))


def _space(design, catalog, cache: EngineCache) -> _Space:
    """The inputs of the search (see :class:`_Space`), or a refusal of the design."""
    from designer.engine import pipeline

    servers, used, job_gpus = _job(design, catalog, cache)
    gpu = servers[0].gpu
    domain = min(min(s.nvlink_domain, s.gpus) for s in servers)
    data = workload_data(design, catalog)
    refused = None
    try:
        w0 = pipeline.resolve_workload(design, catalog, job_gpus, gpu, {}, domain)
    except UsageError as exc:
        # the design's own layout is illegal (a batch it does not split ...): search the model
        # anyway, from the plainest layout, and say why the design's is not ranked
        plain = {**data, "tp": 1, "pp": 1, "dp": 0, "micro_batch": 1, "interleave": 1, "cp": 1, "ep": 1}
        try:
            w0 = from_dict(plain, job_gpus, gpu=gpu)
        except UsageError:
            raise exc from None
        refused = str(exc).removeprefix("workload: ")
    if w0.kind != "transformer":
        raise UsageError("plan searches transformer layouts (tp, pp, micro-batch ...); the design's "
                         "workload is a vision workload, which the engine runs data-parallel only")
    wanted = data.get("gpus")
    pool = int(wanted) if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) \
        and 0 < wanted <= job_gpus else job_gpus
    cap = gpu_memory_GB(gpu)  # GB of 10^9 bytes, the estimate's unit (the catalog's are GiB)
    if cap <= 0:
        raise UsageError(f"GPU model '{gpu.get('id', '?')}' has no memory_GB in the catalog; the "
                         f"search needs it to drop layouts that do not fit")
    names = {f.name for f in fields(Workload)}
    # the design's own pipeline schedule is the one a layout without "pp_overlap" keeps
    current = {k: getattr(w0, k) for k in LAYOUT_FIELDS if k in names and k != "pp_overlap"}
    if not current.get("recompute"):
        current.pop("recompute_granularity", None)
    return _Space(servers=servers, used=used, job_gpus=job_gpus, gpu=gpu, domain=domain, data=data, w0=w0,
                  refused=refused, pool=pool, cap=cap, names=names, current=current,
                  base={k: v for k, v in data.items() if k not in ("gpus",)},
                  line=_rail_line_GBps(design.topology, used[0]), order=_order(data),
                  sharp=_sharp_possible(design, catalog, used), within=_within(data))


def _within(data: dict[str, Any]) -> bool:
    """The workload's ``ep_within_domain`` (``placement.ep_within_domain``)."""
    from designer.engine.placement import ep_within_domain

    return ep_within_domain(data)


def _fit_domains(sp: _Space, lay: dict[str, Any], w: Workload) -> tuple[dict[str, Any], Workload]:
    """Layout ``lay`` (workload ``w``) on the GPUs an ``ep_within_domain`` job runs on
    (``placement.usable_gpus``): dp lowered to what they hold, as ``pipeline.run`` resolves it.
    UsageError when an expert-parallel group cannot fit a domain or the lowered layout breaks a
    rule of the workload."""
    from designer.engine.placement import usable_gpus

    if not sp.within or w.ep <= 1:
        return lay, w
    usable = sum(map(len, usable_gpus(sp.used, w, sp.order)))
    if w.gpus <= usable:
        return lay, w
    dp = usable // (w.tp * w.cp * w.pp)
    if dp < 1:
        raise UsageError(f"workload: ep_within_domain leaves {usable} GPUs, fewer than tp x cp x pp = "
                         f"{w.tp * w.cp * w.pp}")
    lay = {**lay, "dp": dp}
    try:
        return lay, from_dict({**sp.base, **lay}, sp.job_gpus, gpu=sp.gpu)
    except UsageError as exc:
        raise UsageError(f"workload: on the {usable} GPUs ep_within_domain leaves (dp {dp}), "
                         f"{str(exc).removeprefix('workload: ')}") from None


def _order(data: dict[str, Any]) -> str | None:
    """The rank order ``pipeline.run`` places the design's workload with
    (``placement.workload_order``: its own, else Megatron-Core's for a Megatron recipe)."""
    from designer.engine.placement import workload_order

    return workload_order(data)


def pools(sp: _Space) -> tuple[int, ...]:
    """The GPU counts searched: all of the job's (``pool``), and the design's own layout's when it
    runs on fewer, as ``pipeline.run`` resolves it (a global batch that no layout of all the GPUs
    splits, such as one refitted by ``engine.fit.refit_for_batch``; a dp that leaves GPUs idle).
    Without it an odd batch ranks only the layouts of every GPU, all with dp 1 (issue #24: batch
    1,615 on 8,192 GPUs, best tp32 pp64 cp4 at 53 TFLOP/s), below the design's own on fewer."""
    own = sp.w0.gpus
    return (sp.pool,) if sp.refused or not 0 < own < sp.pool else (sp.pool, own)


def _estimates(sp: _Space, tally: _Tally) -> Iterator[tuple]:
    """Every layout of the space (on each of :func:`pools`): dropped with a reason (a cheap rule,
    the workload's own rules, GPU memory) or estimated on uncongested shapes into
    ``tally.fits``; progress as it goes."""
    space = [lay for n in pools(sp) for lay in _layout_space(sp.w0, n, sp.domain, sp.names)]
    total = len(space)
    for i, lay in enumerate(space):
        if i % ESTIMATES_PER_STEP == 0:
            yield ("progress", "estimate", i, total)
        tally.searched += 1
        _estimate_one(sp, tally, lay)
    yield ("progress", "estimate", total, total)


def _estimate_one(sp: _Space, tally: _Tally, lay: dict[str, Any]) -> None:
    """Drop layout ``lay`` (counted by reason) or add its estimate to ``tally.fits``."""
    from designer.engine.placement import place

    why = _rule(sp.w0, lay, sp.domain)
    w = None
    if why is None:
        try:
            w = from_dict({**sp.base, **lay}, sp.job_gpus, gpu=sp.gpu)
            lay, w = _fit_domains(sp, lay, w)
        except UsageError as exc:
            why = "rules"
            tally.examples.setdefault(why, f"{layout_label(lay)}: {str(exc).removeprefix('workload: ')}")
    is_current = _same_layout(lay, sp.current)
    if why is not None or w is None:
        why = why or "rules"
        tally.dropped[why] += 1
        if why not in tally.examples:
            tally.examples[why] = layout_label(lay)
        if is_current:
            tally.current_note = f"the design's layout {layout_label(lay)}: {REASONS[why]}"
        return
    state, mem = model_state_GB(w), memory_per_gpu_GB(w)
    if state is not None and mem is not None:
        mem = max(mem, state)  # the whole never needs less than its model-state part
    over = "model_state" if state is not None and state > sp.cap else \
        "memory" if mem is not None and mem > sp.cap else None
    if over:
        need = state if over == "model_state" else mem
        tally.dropped[over] += 1
        tally.examples.setdefault(over, f"{layout_label(lay)}: {need:.0f} GB > {sp.cap:.1f} GB")
        if is_current:
            tally.current_note = (f"the design's layout {layout_label(lay)} needs {need:.0f} GB per "
                                  f"GPU, more than the {sp.cap:.1f} GB it has ({REASONS[over]})")
        return
    key = tuple(lay.get(k, 1) for k in ("tp", "cp", "pp", "dp", "ep"))
    if key not in tally.placements:
        pl = place(w, sp.used, sp.order, sp.within)
        tally.placements[key] = {d: _shape_of(pl, d, getattr(w, d, 1) if d != "dp" else _dp_size(w),
                                              sp.used[0], sp.line, sp.sharp)
                                 for d in ("tp", "pp", "dp", "cp", "ep")}
    est = _estimate(w, sp.gpu, tally.placements[key])
    tally.fits.append(Candidate(lay, mem, state, est, current=is_current, key=key))


def _engine_runs(tally: _Tally, top: int, evaluate: int | None,
                 run: Callable[[list[Candidate], int], Iterator[int]]
                 ) -> Generator[tuple, None, tuple[list[Candidate], Candidate | None, float]]:
    """Run the engine (``run``: one round of layouts and its number, yielding after each result) on the best
    estimates, one per placement first, then branch and bound: the estimate never exceeds the
    engine's time for the same layout (same compute and timing, no congestion, no resources
    stage), so a layout whose estimate is at or above the best engine time cannot beat it. The
    second round runs every other layout whose estimate is below the first round's best, fastest
    estimate first, up to BOUND_RUNS x the evaluated number in all; the best of the second round
    can only lower the bound, so no third round could add a layout. Two rounds whose members do
    not depend on the order results arrive in: the same runs for any number of workers.
    Returns the layouts run, the design's own layout (when it fits) and the best engine time."""
    fits = tally.fits
    n_eval = max(evaluate if evaluate is not None else max(MIN_EVALUATED, top), 1)
    queue = _pick(fits, n_eval)
    mine = next((c for c in fits if c.current), None)
    if mine is not None:
        tally.current_note = None
        if mine not in queue:
            queue.append(mine)
    yield ("progress", "engine", 0, len(queue))
    for done in run(queue, 1):
        yield ("progress", "engine", done, len(queue))
    best = min((c.iteration_time_s for c in queue if c.iteration_time_s is not None), default=math.inf)
    room = BOUND_RUNS * n_eval + (mine is not None) - len(queue)
    chosen = set(map(id, queue))
    second = [c for c in fits if c.estimate_s < best and id(c) not in chosen][:max(room, 0)]
    if second:
        first = len(queue)
        for done in run(second, 2):
            yield ("progress", "engine", first + done, first + len(second))
        queue += second
        best = min([best] + [c.iteration_time_s for c in second if c.iteration_time_s is not None])
    yield ("progress", "engine", len(queue), len(queue))
    return queue, mine, best


def _plan_result(sp: _Space, tally: _Tally, queue: list[Candidate], mine: Candidate | None, best: float,
                 top: int, seconds: float) -> PlanResult:
    """The ranked layouts run, the rest counted as left by their estimate (or one refusal when
    the engine refused every layout)."""
    ran = set(map(id, queue))
    rest = [c for c in tally.fits if id(c) not in ran]
    if rest:
        tally.dropped["estimate"] += len(rest)
        tally.examples["estimate"] = f"{rest[0].label}: estimate {rest[0].estimate_s:.3g} s"
    open_ = sum(1 for c in rest if c.estimate_s < best)
    ranked = sorted((c for c in queue if c.iteration_time_s is not None),
                    key=lambda c: (c.iteration_time_s, c.estimate_s))
    if not ranked:
        errors = {c.error for c in queue}
        if len(errors) == 1:  # the design, not a layout: one message
            raise UsageError(str(errors.pop()))
        raise UsageError(f"the engine refused every layout it was given; the first: "
                         f"{queue[0].label}: {queue[0].error}")
    label = str(sp.data.get("name") or sp.data.get("id") or sp.w0.name)
    return PlanResult(gpus=sp.pool, design_gpus=sum(s.gpus for s in sp.servers), memory_cap_GB=sp.cap,
                      workload=label, searched=tally.searched, fit=len(tally.fits), ranked=ranked, top=top,
                      dropped=tally.dropped, examples=tally.examples, current=mine, seconds=seconds,
                      current_note=tally.current_note, unsettled=open_)


#: (design dict, the design decoded from it, its EngineCache): a worker decodes the design of a
#: search once, not once per engine run, and its runs share one cache
_decoded: tuple[Any, Any, EngineCache] | None = None

#: the figures of an engine run a :class:`Candidate` keeps (``engine_run``'s answer)
RUN_FIGURES = ("iteration_time_s", "mfu", "tflops_per_gpu", "tokens_per_s", "samples_per_s",
               "training_time_days")


@dataclass(frozen=True)
class Shared:
    """What every engine run of a search shares (sent once per worker, one object): the design as
    a dict (``fileformat.to_dict``), the catalog, the workload dict the layouts are set on, the
    seed (None: the design's)."""

    design: dict[str, Any]
    catalog: Any
    base: dict[str, Any]
    seed: int | None


def engine_run(layout: dict[str, Any], shared: Shared) -> dict[str, Any]:
    """The full engine (``pipeline.run``) on ``layout``: its figures (``RUN_FIGURES``, the
    breakdown and the warnings) or ``{"error": why}`` when the engine refuses it. ``shared``
    (:class:`Shared`) is the same for every run of a search; pure, so a run's answer does not
    depend on where or after which others it runs."""
    global _decoded
    from designer.engine import pipeline

    design_dict, catalog, base, seed = shared.design, shared.catalog, shared.base, shared.seed
    if _decoded is None or _decoded[0] is not design_dict:
        from designer.topology.fileformat import from_dict as design_from_dict

        _decoded = (design_dict, design_from_dict(design_dict, source="<plan>"), EngineCache())
    _, design, cache = _decoded
    try:
        r = pipeline.run(design, catalog, seed=seed, cache=cache, workload={**base, **layout})
    except UsageError as exc:
        return {"error": str(exc)}
    out: dict[str, Any] = {k: getattr(r, k) for k in RUN_FIGURES}
    out.update(breakdown_s=dict(r.breakdown_s), warnings=list(r.warnings))
    return out


def _forget(design_dict: Any) -> None:
    """Drop this process's decoded copy of a finished search's design (a worker's goes with it)."""
    global _decoded
    if _decoded is not None and _decoded[0] is design_dict:
        _decoded = None


def _run_round(cands: list[Candidate], shared: Shared, runner: Runner, tally: _Tally) -> Iterator[int]:
    """Run ``cands`` through ``runner`` (yields how many have finished after each), then keep
    their figures in layout order (so the example of a refusal is the same for any runner)."""
    answers: dict[int, dict[str, Any]] = {}
    runs = runner(engine_run, [c.layout for c in cands], shared)
    try:
        for index, answer in runs:
            answers[index] = answer
            yield len(answers)
    finally:
        # a search closed between two runs (Cancel) stops the runner now: no more runs are
        # handed out (a pool's running ones finish)
        close = getattr(runs, "close", None)
        if close is not None:
            close()
    for index in sorted(answers):
        _keep(cands[index], answers[index], tally)


def _keep(cand: Candidate, answer: dict[str, Any], tally: _Tally) -> None:
    """Keep an :func:`engine_run` answer on ``cand`` (or count its refusal)."""
    if "error" in answer:
        cand.error = answer["error"]
        tally.dropped["engine"] += 1
        tally.examples.setdefault("engine", f"{cand.label}: {cand.error}")
        return
    for k in RUN_FIGURES:
        setattr(cand, k, answer[k])
    cand.breakdown_s, cand.warnings = dict(answer["breakdown_s"]), list(answer["warnings"])


def _pick(fits: list[Candidate], n: int) -> list[Candidate]:
    """The ``n`` layouts to run through the engine, from ``fits`` sorted by estimate: the best
    estimate of each placement first (the engine's routing and congestion differ by placement,
    which the estimate does not see; micro-batch, interleave and recomputation it does), then
    the next best estimates."""
    first: dict[tuple, Candidate] = {}
    for c in fits:
        if len(first) == n:
            break
        first.setdefault(c.key, c)
    chosen = list(first.values())
    chosen += [c for c in fits if c not in chosen][:n - len(chosen)]
    return sorted(chosen, key=lambda c: c.estimate_s)


def search(design, catalog, *, top: int = 5, evaluate: int | None = None,
           seed: int | None = None, cache: EngineCache | None = None,
           runner: Runner | None = None) -> PlanResult:
    """Run :func:`search_steps` to the end and return its :class:`PlanResult`."""
    result = None
    for item in search_steps(design, catalog, top=top, evaluate=evaluate, seed=seed, cache=cache,
                             runner=runner):
        if item[0] == "result":
            result = item[1]
    if result is None:  # search_steps ends with a result or raises
        raise RuntimeError("the layout search ended without a result")
    return cast("PlanResult", result)


def apply(design, layout: dict[str, Any]) -> dict[str, Any]:
    """The design's workload dict with ``layout`` set (its preset and other fields kept). A
    workload ``gpus`` that no longer matches the layout's GPUs is replaced by them."""
    work = dict(design.workload or {})
    work.update({k: v for k, v in layout.items() if k in LAYOUT_FIELDS})
    if not layout.get("recompute"):
        work.pop("recompute_granularity", None)
    size = layout_gpus(layout)
    if work.get("gpus"):
        work["gpus"] = size
    return work


def _dp_size(w: Workload) -> int:
    """Ranks of the placement's data-parallel dimension (cp·dp when the model has cp)."""
    return getattr(w, "dp_ranks", w.dp)


def _same_figures(a: Candidate, b: Candidate) -> bool:
    """Whether the engine gives two layouts the very same figures (exact equality: a layout that
    differs in the last digit is a different outcome)."""
    return (a.iteration_time_s, a.memory_GB, a.tokens_per_s, a.samples_per_s, a.mfu, a.breakdown_s) == \
        (b.iteration_time_s, b.memory_GB, b.tokens_per_s, b.samples_per_s, b.mfu, b.breakdown_s)


def _same_layout(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = set(a) | set(b)
    norm = {"cp": 1, "ep": 1, "interleave": 1, "pp_overlap": False}
    return all(a.get(k, norm.get(k)) == b.get(k, norm.get(k)) for k in keys
               if not (k == "recompute_granularity" and not a.get("recompute")))


def _sharp_possible(design, catalog, used) -> bool:
    """Could the engine reduce in-network for these servers: some switch of the design has SHARP
    and the servers' transport allows it (``pipeline.sharp_transport_problem``)."""
    from designer.engine.pipeline import sharp_transport_problem

    if not any(catalog.resolve(s).get("sharp") for s in design.topology.switches()):
        return False
    return sharp_transport_problem(design, catalog, dict(design.scenario or {}), used) is None


def _rail_line_GBps(topology, srv) -> float:
    """One direction of a server's first rail (GB/s): the capacity of its links."""
    if not srv.rails:
        return 0.0
    from designer.topology.management import traffic_links_of

    return cast(float, sum(l.capacity_Gbps for l in traffic_links_of(topology, srv.rails[0])) / 8.0)


def _nothing_fits(dropped: Counter, examples: dict[str, str], pool: int, cap: float) -> str:
    if dropped.get("model_state") or dropped.get("memory"):
        ex = examples.get("model_state") or examples.get("memory")
        return (f"no layout of the workload on {pool} GPUs fits in {cap:.1f} GB per GPU (e.g. {ex}); "
                f"add GPU servers, use GPUs with more memory, or shard the optimizer "
                f"(--set workload.optimizer_sharded=true)")
    common = dropped.most_common(1)[0][0] if dropped else "rules"
    return (f"no legal layout of the workload on {pool} GPUs: {REASONS[common]} (e.g. "
            f"{examples.get(common, '-')}); change the global batch or the number of GPUs")
