"""Timeline: the whole training run stepped through in simulated time (no Qt).

The steady-state engine gives one iteration; this module plays the run out from the first token to
the token budget and yields samples as it goes, so a GUI can plot them live and the CLI can write
them to CSV. What it adds to the steady state:

* **Jitter.** Each of ``n_workers`` synchronous workers takes ``t0 * (1 + sigma * Z)`` with Z standard
  normal; the step waits for the slowest, ``t0 * (1 + sigma * M_n)`` with ``M_n = max(Z_1..Z_n)``.
  ``P(M_n <= x) = Phi(x) ** n``, so ``M_n = Phi^-1(U ** (1/n))`` for U uniform (inverse-CDF sampling;
  one draw per iteration whatever n is).
* **Data loader.** A prefetch buffer holding ``prefetch_iterations`` batches is filled from storage
  at the achieved read rate A and drained by one batch, B bytes (global batch x bytes per sample),
  per iteration.
  Over a block of k iterations lasting T, the GPUs wait ``max(0, k*B - level - A*T) / A`` (fluid
  model; it gives the steady-state stall ``B/A - t0`` per iteration when ``A < B/t0``). After a
  (re)start the buffer is empty and the first batch must be read before the first step.
* **Checkpoints.** Every ``checkpoint_interval_s`` of wall time the job stops for
  ``checkpoint_write_s`` (synchronous save) and the work so far becomes safe.
* **Failures.** Interruptions arrive as a Poisson process at ``failure_rate_per_gpu_hour * n_gpus``
  per hour of running time. A failure throws away the work since the last completed checkpoint and
  costs ``restart_s`` before training resumes.

Goodput is useful time / wall time, where useful time is the time of the iterations that count
toward the final model (the "effective training time" of the Llama 3 report: time spent on useful
training over elapsed time). Data stalls, checkpoint writes, restarts and lost work are not useful.

Samples are rows of :data:`COLUMNS`; each covers a block of iterations, a checkpoint write or a
restart. The block size is chosen so that a run yields about ``target_samples`` rows, with several
blocks per checkpoint interval so checkpoints land close to their time. That second rule can ask for
any number of rows (a huge token budget with frequent checkpoints), so the blocks are never made
smaller than ``max_rows`` allows: a run then yields at most about ``max_rows`` blocks (plus one row
per checkpoint and per restart) in bounded time, and :attr:`TimelineSummary.note` says so: a
checkpoint lands at the end of the block in which its interval ran out or, in a block longer than
the interval, inside it every interval (``_Clock._long_block``). :func:`write_csv` streams the
rows to the file batch by batch, so memory stays bounded whatever the run's length.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterable, Iterator, Mapping, cast

import numpy as np

from designer.engine.compare import SCENARIO_SETTINGS
from designer.errors import UsageError

#: Unexpected interruptions per GPU-hour: 419 in a 54-day snapshot on 16,384 H100 GPUs.
#: Source: "The Llama 3 Herd of Models", Meta, 2024, section 3.3.4 (Reliability and operational
#: challenges). 419 / (54 * 24 h * 16,384 GPUs) = 1.97e-5 per GPU-hour.
LLAMA3_FAILURES_PER_GPU_HOUR = 419 / (54 * 24 * 16384)

#: Default time from an interruption to training again (detect, reschedule, reload the checkpoint).
#: Assumption, bounded by the same report: >90% effective training time with 466 interruptions in
#: 54 days leaves at most 0.1 * 54 d / 466 = 16.7 min per interruption for restart plus lost work.
DEFAULT_RESTART_S = 600.0

#: Default prefetch depth: PyTorch's DataLoader keeps ``prefetch_factor`` = 2 batches per worker
#: in flight (torch.utils.data.DataLoader documentation).
DEFAULT_PREFETCH_ITERATIONS = 2.0

#: sample columns (units in the names); ``state`` is one of STATES' indices
COLUMNS = ("t_s", "dt_s", "gpu_util", "host_cpu_util", "dpu_util", "network_GBps",
           "storage_read_GBps", "storage_write_GBps", "tokens", "iteration_s", "prefetch_fill",
           "state")
STATES = ("training", "checkpoint", "restart")
TRAINING, CHECKPOINT, RESTART = range(3)
_COL = {name: i for i, name in enumerate(COLUMNS)}

#: the simulation stops once the wall clock passes this many times the failure-free run time
#: (the run "does not finish"): without checkpoints a long run restarts from zero at every
#: failure and its expected length grows as e^(run / MTBF) (:func:`expected_wall_s`)
MAX_SLOWDOWN = 20.0

#: most training blocks a run is cut into by default (about 50 MB of CSV; a few seconds of
#: simulation, bench/bench_timeline.py); derived: 25 x the default ``target_samples``. A run also
#: stops (unfinished, with the reason) once it has yielded ``ROW_CAP_FACTOR x max_rows`` rows in all
#: (blocks, checkpoints and restarts), which only a run that keeps failing inside its blocks reaches
MAX_ROWS = 500_000
#: most iterations (and checkpoint intervals) a run may count: beyond 2^53 a float no longer
#: holds every whole number, and no training run is within many orders of magnitude of it
MAX_COUNT = 1e15
ROW_CAP_FACTOR = 2

#: above this many iterations per block, a block's summed iteration time is drawn from its normal
#: approximation (central limit theorem) instead of iteration by iteration
_EXACT_BLOCK = 64


@dataclass(frozen=True)
class TimelineInputs:
    """Plain numbers the timeline needs, per scenario (see :meth:`from_result`).

    ``iteration_s`` is the engine's steady-state iteration; the parts of it that the timeline plays
    out itself (data stall, straggler wait, amortized checkpoints) are named so they can be taken
    out first (:attr:`base_s`).
    """

    iteration_s: float  #: steady-state iteration time (what the engine reports)
    tokens_per_iteration: float  #: global batch in tokens
    token_budget: float  #: tokens of the whole run
    n_gpus: int = 1
    breakdown_s: Mapping[str, float] = field(default_factory=dict)  #: parts of ``iteration_s``
    compute_s: float | None = None  #: GPU busy time per iteration (default: breakdown "compute")
    # --- jitter
    jitter_sigma: float = 0.0  #: coefficient of variation of one worker's iteration time
    n_workers: int = 1  #: synchronous workers the step waits for (GPUs: each rank is one)
    straggler_s: float = 0.0  #: part of ``iteration_s`` that is the expected straggler wait
    checkpoint_amortized_s: float = 0.0  #: part of ``iteration_s`` that is checkpoints spread out
    # --- data loading
    data_stall_s: float = 0.0  #: part of ``iteration_s`` that is the steady-state data stall
    storage_read_GB_per_iteration: float = 0.0  #: one global batch (0 = no storage reads)
    storage_read_achieved_GBps: float = 0.0  #: what the storage path gives
    prefetch_iterations: float = DEFAULT_PREFETCH_ITERATIONS
    # --- checkpoints and failures
    checkpoint_interval_s: float = 0.0  #: 0 = no checkpoints
    checkpoint_write_s: float = 0.0
    checkpoint_GB: float = 0.0
    failure_rate_per_gpu_hour: float = LLAMA3_FAILURES_PER_GPU_HOUR
    restart_s: float = DEFAULT_RESTART_S
    # --- load figures carried into the samples
    host_cpu_util: float = 0.0  #: host CPU busy share while training
    dpu_util: float = 0.0  #: busiest DPU engine's load while training
    network_GB_per_iteration: float = 0.0  #: bytes all servers put on the fabric per iteration
    label: str = ""

    def __post_init__(self) -> None:
        positive = ("iteration_s", "tokens_per_iteration", "token_budget", "n_gpus", "n_workers")
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("breakdown_s", "label") or value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UsageError(f"timeline input {f.name}: must be a finite number, got {value!r}")
            if value < 0 or (f.name in positive and value <= 0):
                need = "greater than 0" if f.name in positive else "0 or more"
                raise UsageError(f"timeline input {f.name}: must be {need}, got {value!r}")
        if self.storage_read_GB_per_iteration > 0 and self.storage_read_achieved_GBps <= 0:
            raise UsageError("timeline input storage_read_achieved_GBps: must be greater than 0 "
                             "when storage_read_GB_per_iteration is set (the GPUs would never get data)")
        if self.base_s <= 0:
            raise UsageError("timeline input iteration_s: must be larger than data_stall_s + "
                             "straggler_s + checkpoint_amortized_s (the parts it contains)")
        self._check_counts()

    def _check_counts(self) -> None:
        """Refuse inputs whose counts no float holds: more than ``MAX_COUNT`` iterations (a
        token budget of astronomically many global batches), a run longer than a float, or more
        than ``MAX_COUNT`` checkpoint intervals in it (an interval far below one iteration)."""
        ratio = self.token_budget / self.tokens_per_iteration
        if not ratio <= MAX_COUNT:
            raise UsageError(f"timeline input token_budget: {self.token_budget:g} tokens at "
                             f"{self.tokens_per_iteration:g} tokens per iteration is {ratio:.3g} "
                             f"iterations, more than the {MAX_COUNT:.0e} a timeline counts")
        length = self.iterations * self.iteration_s
        if not math.isfinite(length):
            raise UsageError(f"timeline input iteration_s: {self.iterations:,} iterations of "
                             f"{self.iteration_s:g} s is longer than a number can hold")
        if self.checkpoint_interval_s > 0 and not length / self.checkpoint_interval_s <= MAX_COUNT:
            raise UsageError(f"timeline input checkpoint_interval_s: {self.checkpoint_interval_s:g} s "
                             f"cuts the {length:g} s run into more than {MAX_COUNT:.0e} intervals; "
                             f"give an interval of at least one iteration ({self.iteration_s:g} s)")

    @property
    def base_s(self) -> float:
        """Iteration time without the terms the timeline plays out itself (stall, straggler)."""
        straggler = self.straggler_s if self.jitter_sigma > 0 else 0.0
        return self.iteration_s - self.data_stall_s - straggler - self.checkpoint_amortized_s

    @property
    def busy_s(self) -> float:
        """GPU busy time per iteration."""
        if self.compute_s is not None:
            return min(self.compute_s, self.base_s)
        return min(float(self.breakdown_s.get("compute", self.base_s)), self.base_s)

    @property
    def iterations(self) -> int:
        """Iterations of the run: its token budget in global batches, rounded up; at least one
        (a budget below one global batch still takes a step; 0 iterations would make a run of
        no length, whose every rate divides by zero)."""
        return max(1, math.ceil(self.token_budget / self.tokens_per_iteration - 1e-9))

    def with_(self, **changes: Any) -> "TimelineInputs":
        """A copy with some fields changed (e.g. failures off: ``failure_rate_per_gpu_hour=0``)."""
        return replace(self, **changes)

    @classmethod
    def from_result(cls, result: Any, **overrides: Any) -> "TimelineInputs":
        """Build the inputs from an engine ``Result`` (or its ``to_json()`` dict).

        The engine's iteration (``designer.engine.resources.assess``) is ``step + straggler +
        amortized checkpoint`` with ``step`` including the data stall and
        ``straggler = step * E[max of the workers' noise]``. The timeline plays stalls, stragglers
        and checkpoints out itself, so those terms become :attr:`data_stall_s`, :attr:`straggler_s`
        and :attr:`checkpoint_amortized_s`, and the per-worker sigma is chosen so that the drawn
        maximum has the engine's mean: ``sigma = (straggler / step) / E[M_n]`` with n = GPUs.
        ``overrides`` replace any field (e.g. ``checkpoint_interval_s`` from the scenario).
        """
        from designer.engine.jitter import expected_max

        data = result.to_json() if hasattr(result, "to_json") else dict(result)
        it = float(data["iteration_time_s"])
        breakdown = {k: float(v or 0.0) for k, v in (data.get("breakdown_s") or {}).items()}
        res = data.get("resources") or {}
        stor = res.get("storage") or data.get("storage") or {}
        gpus = int(data.get("gpus") or 1)
        straggler = float(res.get("straggler_s") or 0.0)
        ckpt = float(res.get("checkpoint_s") or 0.0)
        step = it - straggler - ckpt
        e_max = expected_max([1.0], [gpus]) if gpus > 1 else 0.0
        sigma = straggler / step / e_max if straggler > 0 and e_max > 0 else 0.0
        workload = data.get("workload") or {}
        # a vision workload has no tokens: its "tokens" are samples (dataset samples x epochs)
        tokens_per_s = float(data.get("tokens_per_s") or 0.0)
        tokens_per_iteration = (tokens_per_s or float(data.get("samples_per_s") or 0.0)) * it
        budget = float((tokens_per_s and workload.get("tokens")) or tokens_per_iteration * float(
            data["training_time_days"]) * 86400 / it)
        host = res.get("host_cpu") or {}
        fabric_GB = sum(float(c["bytes"]) * int(c["calls_per_iteration"]) * int(c["ranks"])
                        for c in data.get("collectives") or [] if int(c.get("servers", 1)) > 1) / 1e9
        kw: dict[str, Any] = dict(
            iteration_s=it, tokens_per_iteration=tokens_per_iteration, token_budget=budget,
            n_gpus=gpus, breakdown_s=breakdown, compute_s=breakdown.get("compute"),
            jitter_sigma=sigma, n_workers=gpus, straggler_s=straggler,
            data_stall_s=float(res.get("data_stall_s") or 0.0), checkpoint_amortized_s=ckpt,
            storage_read_GB_per_iteration=float(stor.get("read_GB_per_iteration") or 0.0),
            storage_read_achieved_GBps=float(stor.get("read_achieved_GBps") or 0.0),
            checkpoint_write_s=float(stor.get("checkpoint_write_s") or 0.0),
            checkpoint_GB=float(stor.get("checkpoint_GB") or 0.0),
            host_cpu_util=min(1.0, float(sum((host.get("by_task") or {}).values()))),
            dpu_util=min(1.0, max((float(v) for v in (res.get("dpu") or {}).values()), default=0.0)),
            network_GB_per_iteration=fabric_GB,
        )
        kw.update(overrides)
        if "checkpoint_write_s" in stor and stor["checkpoint_write_s"] is None:  # no storage: no checkpoint is written
            kw["checkpoint_interval_s"] = 0.0
        return cls(**kw)


class Samples:
    """A block of timeline rows: an ``(n, len(COLUMNS))`` float array, columns by name."""

    __slots__ = ("data",)

    def __init__(self, data: np.ndarray) -> None:
        self.data = np.asarray(data, dtype=float).reshape(-1, len(COLUMNS))

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[:, _COL[name]]

    @classmethod
    def concat(cls, parts: Iterable["Samples"]) -> "Samples":
        arrays = [p.data for p in parts]
        return cls(np.concatenate(arrays) if arrays else np.empty((0, len(COLUMNS))))


@dataclass(frozen=True)
class TimelineSummary:
    """What the whole run came to."""

    wall_s: float
    useful_s: float  #: time of the iterations that count toward the final model
    goodput: float  #: useful_s / wall_s
    iterations: int  #: iterations the model needed
    iterations_run: int  #: including those lost to failures
    failures: int
    checkpoints: int
    time_s: dict[str, float]  #: wall time by what it went to (useful, data_stall, checkpoint, restart, lost)
    mean_iteration_s: float  #: (iteration + data stall time) / iterations run
    finished: bool = True  #: False: stopped at MAX_SLOWDOWN x the failure-free time
    expected_wall_s: float = math.nan  #: closed-form expectation (:func:`expected_wall_s`)
    note: str = ""  #: how the rows were coarsened to stay within ``max_rows`` ('' when they were not)
    row_limited: bool = False  #: True: stopped at the row cap (see :data:`ROW_CAP_FACTOR`)
    rows: int = 0  #: rows yielded

    @property
    def training_time_days(self) -> float:
        return self.wall_s / 86400.0

    def to_json(self) -> dict:
        return {"wall_s": self.wall_s, "training_time_days": self.training_time_days,
                "useful_s": self.useful_s, "goodput": self.goodput, "iterations": self.iterations,
                "iterations_run": self.iterations_run, "failures": self.failures,
                "checkpoints": self.checkpoints, "time_s": dict(self.time_s),
                "mean_iteration_s": self.mean_iteration_s, "finished": self.finished,
                "expected_wall_s": self.expected_wall_s, "note": self.note,
                "row_limited": self.row_limited, "rows": self.rows}

    def unfinished_text(self) -> str:
        """Why the run was stopped, for users ('' when it finished)."""
        if self.finished:
            return ""
        if self.row_limited and self.checkpoints and self.iterations_run:
            # checkpoints land (inside long blocks too): the rows ran out because every failure
            # and its restart take rows of their own, and this run has more failures than rows
            expected = self.failures * self.expected_wall_s / self.wall_s if self.wall_s > 0 else math.inf
            return (f"the run was stopped after {self.rows:,} timeline rows: {self.training_time_days:,.0f} "
                    f"days of wall time, {self.failures:,} failures, {self.checkpoints:,} checkpoints, "
                    f"{_count(self.iterations_run)} of {_count(self.iterations)} iterations run (goodput "
                    f"so far {self.goodput:.1%}); every failure and its restart take timeline rows of "
                    f"their own and the whole run would have about {_count(expected)} failures. Lower "
                    f"the token budget about {self.iterations / self.iterations_run:,.3g}-fold to play "
                    f"it out")
        if self.row_limited:
            return (f"the run was stopped after {self.rows:,} timeline rows: {self.training_time_days:,.0f} "
                    f"days of wall time, {self.failures:,} failures, {_count(self.iterations_run)} of "
                    f"{_count(self.iterations)} iterations run; a failure keeps landing before the work is "
                    f"safe. Lower the token budget or write checkpoints more often (scenario "
                    f"checkpoint_interval_s)")
        days = self.expected_wall_s / 86400.0
        years = days / 365.25
        expect = ("longer than any number here" if not math.isfinite(days) else
                  f"about {years:.2g} years" if years >= 1e6 else
                  f"about {years:,.0f} years" if years >= 3 else f"about {days:,.0f} days")
        return (f"the run does not finish: it was stopped after {self.training_time_days:,.0f} days "
                f"of wall time ({MAX_SLOWDOWN:g} x its failure-free length), {self.failures:,} failures "
                f"having thrown away the work since the last checkpoint each time "
                f"({self.iterations_run:,} iterations run for {self.iterations:,} needed); the "
                f"expected wall time is {expect}. Write checkpoints more often (scenario "
                f"checkpoint_interval_s) so a failure loses less work")


def _count(n: float) -> str:
    """A count for messages: digit groups, or 3 significant digits when it is astronomically large."""
    return f"{n:,.0f}" if abs(n) < 1e15 else f"{float(n):.3g}"


def _max_normal_moments(n: int) -> tuple[float, float]:
    """Mean and variance of the maximum of n standard normals (density n phi(x) Phi(x)^(n-1))."""
    from scipy import integrate, special  # here: scipy.special/integrate take ~0.4 s to import

    def density(x: float) -> float:
        return cast(float, n * math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi) * special.ndtr(x) ** (n - 1))

    m1 = integrate.quad(lambda x: x * density(x), -12, 12, limit=200)[0]
    m2 = integrate.quad(lambda x: x * x * density(x), -12, 12, limit=200)[0]
    return m1, max(m2 - m1 * m1, 0.0)


class TimelineRun:
    """One simulated run. Iterate :meth:`batches`; read :attr:`progress` and, at the end, :attr:`summary`."""

    def __init__(self, inputs: TimelineInputs, *, seed: int = 0, target_samples: int = 20000,
                 batch_rows: int = 1024, max_rows: int = MAX_ROWS) -> None:
        self.inputs = inputs
        self.seed = int(seed)
        self.batch_rows = max(1, int(batch_rows))
        n = inputs.iterations
        # iterations that will run, lost ones included: about n x the expected slowdown. Counted
        # only when failures at least double the run, so that at usual failure rates the blocks
        # (and so the jitter draws) are the same with failures on and off
        free = expected_wall_s(inputs.with_(failure_rate_per_gpu_hour=0.0))
        slowdown = min(MAX_SLOWDOWN, expected_wall_s(inputs) / free) if free > 0 else 1.0
        slowdown = slowdown if slowdown > 2.0 else 1.0
        k = max(1, math.ceil(n * slowdown / max(1, target_samples)))
        if inputs.checkpoint_interval_s > 0:  # several blocks per checkpoint interval
            k = min(k, max(1, int(min(inputs.checkpoint_interval_s / (4 * inputs.base_s), k))))
        self.max_rows = max(1, int(max_rows))
        self.note = ""
        floor = math.ceil(n * slowdown / self.max_rows)
        if floor > k:  # the checkpoint rule would give more than max_rows blocks
            k = floor
            self.note = (f"blocks of {_count(k)} iterations ({_count(k * inputs.base_s)} s) keep the timeline "
                         f"within {self.max_rows:,} rows; "
                         + (f"the checkpoints every {inputs.checkpoint_interval_s:g} s are written "
                            f"inside the blocks (one row each block)"
                            if k * inputs.base_s > inputs.checkpoint_interval_s else
                            f"a checkpoint is written at the end of the block in which its "
                            f"{inputs.checkpoint_interval_s:g} s interval ran out"))
        self.block = k
        self.progress = 0.0
        self.summary: TimelineSummary | None = None

    # --- random streams (independent, so turning failures on does not change the jitter draws)
    def _block_sums(self, rng: np.random.Generator, k: int, m: int) -> np.ndarray:
        """Summed iteration time (without data stall) of m blocks of k iterations."""
        inp = self.inputs
        t0 = inp.base_s
        if inp.jitter_sigma <= 0:
            return np.full(m, k * t0)
        n = inp.n_workers
        if k <= _EXACT_BLOCK:
            u = rng.random((m, k))
            # M_n = Phi^-1(U^(1/n)) written with expm1 so that U^(1/n) near 1 keeps its precision
            from scipy import special
            mx = -special.ndtri(-np.expm1(np.log(u) / n))
            return cast(np.ndarray, np.maximum(t0 * (1 + inp.jitter_sigma * mx), 0.0).sum(axis=1))
        mean, var = self._moments
        z = rng.standard_normal(m)
        return k * t0 * (1 + inp.jitter_sigma * mean) + math.sqrt(k * var) * t0 * inp.jitter_sigma * z

    def batches(self) -> Iterator[Samples]:
        """The run's rows, in batches of ``batch_rows``: blocks of ``block`` iterations played
        one after the other (jitter, data stalls, failures with their restarts and lost work,
        checkpoints), until the token budget is done or the run is stopped (``MAX_SLOWDOWN`` x
        the failure-free time, or the row cap). :attr:`summary` is set at the end."""
        inp = self.inputs
        if inp.jitter_sigma > 0 and self.block > _EXACT_BLOCK:
            self._moments = _max_normal_moments(inp.n_workers)
        root = np.random.SeedSequence(self.seed)
        jitter_rng, failure_rng = (np.random.default_rng(s) for s in root.spawn(2))
        st = _Clock(inp, failure_rng)
        n_total, k = inp.iterations, self.block
        row_cap = ROW_CAP_FACTOR * self.max_rows
        yielded = 0
        row_limited = False
        limit = MAX_SLOWDOWN * expected_wall_s(inp.with_(failure_rate_per_gpu_hour=0.0))
        finished = True
        sums = np.empty(0)
        si = 0
        while st.done + st.pending < n_total:
            if st.t > limit:
                finished = False
                break
            if len(st.rows) >= self.batch_rows:  # at the top: the failure path below continues early
                yield Samples(np.array(st.rows))
                yielded += len(st.rows)
                st.rows = []
            if yielded + len(st.rows) >= row_cap:
                finished, row_limited = False, True
                break
            kb = min(k, n_total - st.done - st.pending)
            if kb == k:
                if si >= len(sums):
                    sums, si = self._block_sums(jitter_rng, k, 1024), 0
                iter_s = float(sums[si])
                si += 1
            else:
                iter_s = float(self._block_sums(jitter_rng, kb, 1)[0])
            if st.block(kb, iter_s) and st.done + st.pending < n_total:
                st.checkpoint_if_due()
            self.progress = (st.done + st.pending) / n_total
        if st.rows:
            yield Samples(np.array(st.rows))
            yielded += len(st.rows)
        self.progress = 1.0
        self.summary = st.summary(finished=finished, row_limited=row_limited, rows=yielded, note=self.note)


class _Clock:
    """The state of one played run: wall time, the prefetch buffer, time to the next failure,
    the iterations safe in the last checkpoint and those since, and the tallies of where the
    time went; the rows made so far (see ``COLUMNS``)."""

    def __init__(self, inp: TimelineInputs, failure_rng: np.random.Generator) -> None:
        self.inp = inp
        self._failure_rng = failure_rng
        self.rate_per_s = inp.failure_rate_per_gpu_hour * inp.n_gpus / 3600.0
        self.reads = inp.storage_read_GB_per_iteration > 0
        self.cap = max(inp.prefetch_iterations, 1.0) * inp.storage_read_GB_per_iteration
        self.rows: list[tuple] = []
        self.t = 0.0
        self.level = 0.0  # prefetch buffer, GB
        self.to_failure = self.next_failure()  # running time until the next interruption
        self.since_ckpt = 0.0  # wall time since the last checkpoint ended (or restart)
        self.done = 0  # iterations safe in the last checkpoint
        self.pending = 0  # iterations since then
        self.pend_iter_s = self.pend_stall_s = 0.0
        self.useful = self.stall_total = self.lost_stall = self.ckpt_total = 0.0
        self.restart_total = self.lost_total = self.run_iter_s = 0.0
        self.iterations_run = self.failures = self.checkpoints = 0
        self.need_fill = self.reads

    def next_failure(self) -> float:
        """Running time to the next failure: exponential at the cluster's failure rate."""
        return self._failure_rng.exponential(1 / self.rate_per_s) if self.rate_per_s > 0 else math.inf

    def emit(self, dt: float, gpu: float, running: bool, netGB: float, readGB: float, writeGB: float,
             iter_s: float, state: int) -> None:
        """One row of ``dt`` seconds ending now (rates are the bytes over ``dt``)."""
        inp = self.inp
        self.rows.append((self.t, dt, gpu, inp.host_cpu_util if running else 0.0,
                          inp.dpu_util if running else 0.0, netGB / dt if dt > 0 else 0.0,
                          readGB / dt if dt > 0 else 0.0, writeGB / dt if dt > 0 else 0.0,
                          (self.done + self.pending) * inp.tokens_per_iteration, iter_s,
                          self.level / self.cap if self.reads else 1.0, state))

    def fail(self) -> None:
        """A failure now: the work since the last checkpoint is lost, the job restarts and the
        prefetch buffer starts empty."""
        inp = self.inp
        self.lost_total += self.pend_iter_s + self.pend_stall_s
        self.lost_stall += self.pend_stall_s
        self.pending, self.pend_iter_s, self.pend_stall_s = 0, 0.0, 0.0
        self.failures += 1
        self.level = 0.0
        self.t += inp.restart_s
        self.restart_total += inp.restart_s
        self.emit(inp.restart_s, 0.0, False, 0.0, 0.0, 0.0, math.nan, RESTART)
        self.to_failure = self.next_failure()
        self.since_ckpt = 0.0
        self.need_fill = self.reads

    def block(self, kb: int, iter_s: float) -> bool:
        """Play ``kb`` iterations taking ``iter_s`` of compute: the data stall the prefetch
        buffer leaves (the first batch after a start is read before the first step), then either
        the whole block or, when a failure comes inside it, the part before (then the failure).
        True when the block completed."""
        inp = self.inp
        busy, net = inp.busy_s, inp.network_GB_per_iteration
        stall = read = 0.0
        if self.reads:
            batch_B, rate_A = inp.storage_read_GB_per_iteration, inp.storage_read_achieved_GBps
            fill = batch_B / rate_A if self.need_fill else 0.0
            self.need_fill = False
            stall = fill + max(0.0, kb * batch_B - self.level - rate_A * iter_s) / rate_A
            read = min(self.cap - self.level + kb * batch_B, rate_A * (iter_s + stall))
            self.level = self.level + read - kb * batch_B
        dt = iter_s + stall
        if inp.checkpoint_interval_s > 0 and dt > inp.checkpoint_interval_s and kb > 1:
            return self._long_block(kb, iter_s, stall, read)
        if dt > self.to_failure:  # interrupted inside this block: its work is lost anyway
            part = self.to_failure / dt
            self.t += self.to_failure
            self.pend_iter_s += iter_s * part
            self.pend_stall_s += stall * part
            self.stall_total += stall * part
            self.run_iter_s += dt * part
            self.iterations_run += int(kb * part)
            self.pending += int(kb * part)
            self.emit(self.to_failure, kb * part * busy / self.to_failure if self.to_failure > 0 else 0.0,
                      True, net * kb * part, read * part, 0.0, dt / kb, TRAINING)
            self.fail()
            return False
        self.to_failure -= dt
        self.t += dt
        self.since_ckpt += dt
        self.pending += kb
        self.iterations_run += kb
        self.pend_iter_s += iter_s
        self.pend_stall_s += stall
        self.stall_total += stall
        self.run_iter_s += dt
        self.emit(dt, kb * busy / dt, True, net * kb, read, 0.0, dt / kb, TRAINING)
        return True

    def _long_block(self, kb: int, iter_s: float, stall: float, read: float) -> bool:
        """A block longer than the checkpoint interval (the row limit made it so): its
        checkpoints are written inside it, every ``checkpoint_interval_s`` I of training time,
        so a failure in it loses only the work since the last of them.

        derived: the block's ``kb`` iterations run at a steady rate (fluid, as the data stall
        is), so after training time x of the block's dt, ``kb * x / dt`` iterations are done.
        With s the training time since the last checkpoint before the block, checkpoint j (of
        ``m = min(ceil((s + dt) / I) - 1, kb - 1)``) starts at running time ``j*I - s + (j-1)*w`` into the block and
        ends w later (w: ``checkpoint_write_s``); m counts those strictly inside the block, at most
        ``kb - 1`` (a checkpoint due at its end is written after it, as for any block, and a step
        is never cut in two); a failure at running time f has completed
        ``c = #{j <= m: j*I - s + j*w <= f}`` of them, trained ``min(f - c*w, (c+1)*I - s)``
        and keeps the iterations up to ``c*I - s``. One TRAINING row covers the block, its
        writes inside (``storage_write_GBps`` carries their bytes)."""
        inp = self.inp
        busy, net = inp.busy_s, inp.network_GB_per_iteration
        I, w, s = inp.checkpoint_interval_s, inp.checkpoint_write_s, self.since_ckpt
        dt = iter_s + stall
        # inside only (a checkpoint due at the block's end is checkpoint_if_due's, as for any
        # block), and at most one between two iterations
        m = max(0, min(kb - 1, math.ceil((s + dt) / I) - 1))
        f = min(self.to_failure, dt + m * w)
        failed = self.to_failure < dt + m * w
        c = min(m, int((f + s) // (I + w))) if m else 0
        while c < m and (c + 1) * I - s + (c + 1) * w <= f:  # float guard of the floor above
            c += 1
        while c > 0 and c * I - s + c * w > f:
            c -= 1
        trained = min(f - c * w, (c + 1) * I - s) if (failed and c < m) else (f - c * w)
        trained = max(0.0, min(dt, trained))
        writing = f - trained  # the completed writes and a write a failure cut short
        part = trained / dt
        ran = kb if not failed else int(kb * part)
        safe = max(0, min(ran, int(kb * (c * I - s) / dt))) if c else 0
        self.t += f
        self.to_failure -= f
        self.iterations_run += ran
        self.run_iter_s += dt * (ran / kb)
        self.stall_total += stall * part
        if self.reads:  # the loader keeps reading while the GPUs wait for the writes
            self.level = min(self.cap, self.level + inp.storage_read_achieved_GBps * writing)
        if c:  # the pending work and the block's up to the last completed checkpoint are safe
            x = (c * I - s) / dt
            self.done += self.pending + safe
            self.useful += self.pend_iter_s + iter_s * x
            self.pending = ran - safe
            self.pend_iter_s, self.pend_stall_s = iter_s * (part - x), stall * (part - x)
            self.since_ckpt = trained - (c * I - s)
        else:
            self.pending += ran
            self.pend_iter_s += iter_s * part
            self.pend_stall_s += stall * part
            self.since_ckpt += trained
        self.checkpoints += c
        self.ckpt_total += writing
        self.emit(f, ran * busy / f if f > 0 else 0.0, True, net * ran, read * part,
                  inp.checkpoint_GB * writing / w if w > 0 else c * inp.checkpoint_GB,
                  dt / kb, TRAINING)
        if failed:
            self.fail()
            return False
        return True

    def checkpoint_if_due(self) -> None:
        """Write a checkpoint when its interval has run out: the iterations since the last one
        become safe, unless a failure comes while it is written (then it never completes)."""
        inp = self.inp
        if not (inp.checkpoint_interval_s > 0 and self.since_ckpt >= inp.checkpoint_interval_s):
            return
        w = inp.checkpoint_write_s
        if w > self.to_failure:
            self.t += self.to_failure
            self.ckpt_total += self.to_failure
            self.emit(self.to_failure, 0.0, True, 0.0, 0.0, inp.checkpoint_GB * self.to_failure / w,
                      math.nan, CHECKPOINT)
            self.fail()
            return
        self.to_failure -= w
        self.t += w
        self.ckpt_total += w
        if self.reads:  # the loader keeps reading while the GPUs wait
            self.level = min(self.cap, self.level + inp.storage_read_achieved_GBps * w)
        self.done, self.pending = self.done + self.pending, 0
        self.useful += self.pend_iter_s
        self.pend_iter_s = self.pend_stall_s = 0.0
        self.checkpoints += 1
        self.since_ckpt = 0.0
        self.emit(w, 0.0, True, 0.0, 0.0, inp.checkpoint_GB, math.nan, CHECKPOINT)

    def summary(self, *, finished: bool, row_limited: bool, rows: int, note: str) -> TimelineSummary:
        """What the run came to (a stopped run's work since the last checkpoint never becomes
        safe: it counts as lost)."""
        if finished:
            self.useful += self.pend_iter_s
        else:
            self.lost_total += self.pend_iter_s + self.pend_stall_s
            self.lost_stall += self.pend_stall_s
        t, useful = self.t, self.useful
        return TimelineSummary(
            wall_s=t, useful_s=useful, goodput=useful / t if t > 0 else 0.0, iterations=self.inp.iterations,
            iterations_run=self.iterations_run, failures=self.failures, checkpoints=self.checkpoints,
            time_s={"useful": useful, "data_stall": self.stall_total - self.lost_stall,
                    "checkpoint": self.ckpt_total, "restart": self.restart_total, "lost": self.lost_total},
            mean_iteration_s=self.run_iter_s / self.iterations_run if self.iterations_run else math.nan,
            finished=finished, expected_wall_s=expected_wall_s(self.inp), note=note,
            row_limited=row_limited, rows=rows)


def expected_wall_s(inp: TimelineInputs) -> float:
    """Expected wall time of the run with Poisson failures, in closed form.

    Work is made safe in segments: the run is cut by checkpoints every ``checkpoint_interval_s``
    of wall time into ``n = L / tau`` segments (L = iterations x iteration_s, the failure-free
    length; without checkpoints one segment of length L). A segment of length
    ``s = tau + w`` (w: the checkpoint write) with failures at rate ``lam`` (mean time between
    failures ``M = 1/lam``) and a restart of R after each takes, by the renewal argument
    ``E = E[min(X, s)] + P(X < s)·(R + E)`` with X ~ Exp(lam),
    ``E = (M + R)·(e^(s/M) − 1)`` — Daly's estimate (J. T. Daly, "A higher order estimate of the
    optimum checkpoint interval for restart dumps", FGCS 22, 2006, eq. 3) without failures during
    the restart, which this timeline does not draw either. Without failures it is ``L + n·w``.
    Data stalls of a restart's first batch are not counted (small against any segment).
    """
    L = inp.iterations * inp.iteration_s
    tau = inp.checkpoint_interval_s if 0 < inp.checkpoint_interval_s < L else L
    w = inp.checkpoint_write_s if tau < L else 0.0
    n = L / tau
    lam = inp.failure_rate_per_gpu_hour * inp.n_gpus / 3600.0
    if lam <= 0:
        return L + max(math.ceil(n) - 1, 0) * w
    M = 1.0 / lam
    x = (tau + w) / M
    if x > 700:  # e^x overflows a float: longer than anything that can be run
        return math.inf
    return n * (M + inp.restart_s) * math.expm1(x)


def simulate(inputs: TimelineInputs, **kw: Any) -> tuple[Samples, TimelineSummary]:
    """Run the whole timeline at once: all samples and the summary (``kw`` as for TimelineRun)."""
    run = TimelineRun(inputs, **kw)
    samples = Samples.concat(list(run.batches()))
    assert run.summary is not None
    return samples, run.summary


def write_csv(samples: Samples | Iterable[Samples], path: str, *, inputs: Iterable[str] = ()) -> int:
    """Write samples (one block or an iterable of blocks) to ``path`` as CSV; returns the row count.

    Header = :data:`COLUMNS`; ``state`` is written as its name (training/checkpoint/restart). The
    blocks are written as they come (a :meth:`TimelineRun.batches` generator is never held whole),
    to a temporary file renamed over ``path`` at the end (``designer.safeio.atomic_output``): an
    error or a kill leaves the old file or none. ``path`` must not be one of ``inputs``.
    """
    from designer.safeio import atomic_output

    parts = [samples] if isinstance(samples, Samples) else samples
    count = 0
    state = _COL["state"]
    names = np.array(STATES, dtype=object)
    with atomic_output(path, inputs=inputs, what="timeline") as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(COLUMNS)
            for part in parts:
                data = part.data
                if not len(data):
                    continue
                text = np.char.mod("%.6g", data[:, :state]).astype(object)
                text[np.isnan(data[:, :state])] = ""
                writer.writerows(np.column_stack([text, names[data[:, state].astype(int)]]).tolist())
                count += len(data)
    return count


def inputs_for(design: Any, catalog: Any, scenario: str, *,
               seed: int | None = None, cache: Any = None) -> tuple[Any, TimelineInputs]:
    """Run the steady-state engine for one scenario ("host" or "dpu") and build the timeline inputs
    (``seed`` None: the design's scenario seed; ``cache``: the caller's ``engine.cache.EngineCache``,
    None for none).

    Returns ``(Result, TimelineInputs)``; the checkpoint interval comes from the design's scenario
    settings (``checkpoint_interval_s``) unless the result carries one.
    """
    from designer.engine import pipeline

    result = pipeline.run(design, catalog, scenario=dict(SCENARIO_SETTINGS[scenario]), seed=seed, cache=cache)
    return result, inputs_of(result, design, scenario)


def inputs_of(result: Any, design: Any, label: str = "") -> TimelineInputs:
    """The timeline inputs of an engine ``result`` of ``design``: the checkpoint interval from the
    design's scenario settings (``checkpoint_interval_s``) unless the result carries one."""
    inputs = TimelineInputs.from_result(result, label=label)
    if inputs.checkpoint_interval_s == 0:
        interval = float(design.scenario.get("checkpoint_interval_s", 0.0) or 0.0)
        inputs = inputs.with_(checkpoint_interval_s=interval)
    return inputs
