"""Result of one engine run: what the GUI, the report and ``dpu-designer run --json`` show.

Units are in the field names (``_s`` seconds, ``_GBps`` 10^9 byte/s, ``tflops`` 10^12 FLOP/s).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Iterator, overload, cast

import numpy as np

#: keys of ``Result.breakdown_s``; they add up to ``iteration_time_s``
BREAKDOWN_KEYS = ("compute", "tp_comm", "pp_comm", "cp_comm", "ep_comm", "dp_exposed", "bubble", "host_cpu_slowdown",
                  "dpu_slowdown", "data_stall", "straggler", "checkpoint", "activation_offload",
                  "optimizer_offload")
#: breakdown parts that exist only with a workload switch on (``offload_layers``,
#: ``optimizer_cpu_offload``): the JSON keeps their zero, the tables leave a zero row out
SWITCH_PARTS = {"activation_offload": "offload_layers", "optimizer_offload": "optimizer_cpu_offload"}
#: what each breakdown part is called in tables, plots and reports
BREAKDOWN_LABEL = {
    "compute": "Compute",
    "tp_comm": "Tensor-parallel communication",
    "pp_comm": "Pipeline send/receive",
    "cp_comm": "Context-parallel ring exchange",
    "ep_comm": "Expert-parallel all-to-all",
    "dp_exposed": "Exposed data-parallel communication",
    "bubble": "Pipeline bubble",
    "host_cpu_slowdown": "Host CPU over capacity (network stacks)",
    "dpu_slowdown": "Adapter engine over capacity (DPU or SmartNIC)",
    "data_stall": "Data stall (storage reads, host data loading)",
    "straggler": "Stragglers (slowest worker)",
    "checkpoint": "Checkpoints (amortized)",
    "activation_offload": "Activation offload (host link)",
    "optimizer_offload": "CPU optimizer step (offload)",
}


@dataclass(frozen=True)
class CollectiveResult:
    """One collective of the iteration with the algorithm the NCCL-style cost model chose."""

    name: str  #: "tp_allreduce", "pp_sendrecv", "dp_allreduce", "dp_reduce_scatter", ...
    op: str
    algorithm: str
    protocol: str
    bytes: float  #: per call
    calls_per_iteration: int
    time_s: float  #: per call
    algbw_GBps: float
    busbw_GBps: float
    ranks: int
    servers: int


@dataclass(frozen=True)
class LinkResult:
    id: str
    utilization: float  #: busier direction, highest over the communication phases (0..1)
    phase: str  #: phase where the peak occurs


class LinkResults(Sequence[LinkResult]):
    """Every link's :class:`LinkResult`, held as arrays (a 131k-GPU design has ~340k links: one
    object per link costs more than the solve). Indexing and iterating give LinkResult objects;
    :meth:`to_json` writes the list of ``{"id", "utilization", "phase"}`` straight from the arrays."""

    def __init__(self, ids: list[str], utilization: np.ndarray, phase: list[str]) -> None:
        if not len(ids) == len(utilization) == len(phase):
            raise ValueError("link ids, utilizations and phases must have the same length")
        self.ids = list(ids)
        self.utilization = np.asarray(utilization, dtype=float)
        self._phase: list[str] | None = list(phase)
        self._phase_names: list[str] | None = None
        self._phase_codes: np.ndarray | None = None

    @classmethod
    def from_codes(cls, ids: list[str], utilization: np.ndarray, names: list[str],
                   codes: np.ndarray) -> "LinkResults":
        """Link ``i``'s phase is ``names[codes[i]]`` (the network stage's form: a phase number
        per link); the list of phases is written out only when asked for."""
        codes = np.asarray(codes, dtype=np.int64)
        if not len(ids) == len(utilization) == len(codes):
            raise ValueError("link ids, utilizations and phases must have the same length")
        if len(codes) and (codes.min() < 0 or codes.max() >= len(names)):
            raise ValueError("a phase code names no phase")
        out = cls.__new__(cls)
        out.ids = list(ids)
        out.utilization = np.asarray(utilization, dtype=float)
        out._phase, out._phase_names, out._phase_codes = None, list(names), codes
        return out

    @property
    def phase(self) -> list[str]:
        """Each link's phase name."""
        if self._phase is None:
            names, codes = self._phase_names or [], self._phase_codes
            table = np.array(names + [None], dtype=object)[:-1]  # strings kept as objects
            self._phase = table[codes].tolist() if codes is not None else []
        return self._phase

    def _ids_written_as_is(self) -> bool | None:
        """Whether json.dumps (ensure_ascii) writes every id as itself in quotes: only printable
        ASCII (space to ``~``), no quote, no backslash (its escapes are exactly the other
        characters); None when an id is not a string. One join of the ids answers both."""
        try:
            text = "".join(self.ids)
        except TypeError:
            return None
        return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text

    def _phases_are_strings(self) -> bool:
        names = self._phase_names if self._phase_codes is not None else self._phase
        return set(map(type, names or [])) <= {str}

    def _phases_coded(self) -> tuple[list[str], np.ndarray]:
        """Distinct phase names and each link's position among them (a dict look-up per link
        when the phases were given as a list)."""
        if self._phase_codes is not None:
            return self._phase_names or [], self._phase_codes
        phase = self.phase
        names = sorted(set(phase))
        at = dict(zip(names, range(len(names))))
        return names, np.fromiter(map(at.__getitem__, phase), dtype=np.int64, count=len(phase))

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> LinkResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[LinkResult]: ...

    def __getitem__(self, i: int | slice) -> LinkResult | list[LinkResult]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return LinkResult(self.ids[i], float(self.utilization[i]), self.phase[i])

    def __iter__(self) -> Iterator[LinkResult]:
        for lid, u, ph in zip(self.ids, self.utilization.tolist(), self.phase):
            yield LinkResult(lid, u, ph)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LinkResults, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"LinkResults({len(self)} links)"

    def top(self, n: int) -> list[LinkResult]:
        """The ``n`` busiest links, busiest first (ties in link order, as a stable sort gives)."""
        order = np.argsort(-self.utilization, kind="stable")[:max(n, 0)]
        return [self[int(i)] for i in order]

    def to_json(self) -> list[dict[str, Any]]:
        util = self.utilization.tolist()
        if not np.isfinite(self.utilization).all():
            util = [u if math.isfinite(u) else None for u in util]
        return [{"id": i, "utilization": u, "phase": p} for i, u, p in zip(self.ids, util, self.phase)]

    def json_text(self, indent: int, level: int = 1) -> str:
        """``json.dumps(self.to_json(), indent=indent)`` as it stands ``level`` deep in an
        object (the same text), written from the arrays with no dict per link.

        Each item is ``{"id": ID,`` + the text of its ``"utilization": U, "phase": P}`` part, and
        that part is written once per distinct (utilization, phase): a rail design has a handful
        (two in a 16k-GPU GPT-3 run), so ``float.__repr__`` (json.dumps' float text; a non-finite
        value is ``null``, as :meth:`to_json` makes it) runs a handful of times, not once per
        link. Utilizations are told apart by their bits (``-0.0`` is not ``0.0``).
        When no id holds a character json escapes (only printable ASCII, no quote or backslash:
        json.dumps writes such an id as itself in quotes), the ids go into the text as they are,
        the quotes written in the parts between them; otherwise through json's C string encoder.
        The ids and the parts between them are joined in one C loop."""
        return "".join(self._json_parts(indent, level))

    def _json_parts(self, indent: int, level: int = 1, before: str = "", after: str = "") -> list[str]:
        """:meth:`json_text` between ``before`` and ``after``, as strings to join: the ids and
        the parts between them, the first holding ``before`` and the last ``after`` (so the
        whole output is written by one join, not copied again to trim or place it)."""
        if not self.ids:
            return [before, "[]", after]
        enc = json.encoder.encode_basestring_ascii  # json.dumps' default: ensure_ascii
        close, item, field = ("\n" + " " * (indent * k) for k in (level, level + 1, level + 2))
        bits, util_of = np.unique(np.ascontiguousarray(self.utilization, dtype=np.float64).view(np.int64),
                                  return_inverse=True)
        numbers = [float.__repr__(u) if math.isfinite(u) else "null" for u in bits.view(np.float64).tolist()]
        phases, phase_of = self._phases_coded()
        # distinct (utilization, phase) pairs by marking (the keys are below their count)
        key = util_of.ravel() * len(phases) + phase_of
        seen = np.zeros(len(bits) * len(phases), dtype=bool)
        seen[key] = True
        pairs = np.flatnonzero(seen)
        tail_of = (np.cumsum(seen) - 1)[key]
        plain = self._ids_written_as_is()
        quote = '"' if plain else ""
        head = f'{{{field}"id": {quote}'
        ends = [f'{quote},{field}"utilization": {numbers[k // len(phases)]},{field}"phase": '
                f'{enc(phases[k % len(phases)])}{item}}}' for k in pairs.tolist()]
        tails = np.empty(len(pairs), dtype=object)
        tails[:] = [f"{e},{item}{head}" for e in ends]
        parts = [""] * (2 * len(self.ids))
        parts[0::2] = self.ids if plain else map(enc, self.ids)
        parts[1::2] = tails[tail_of].tolist()
        parts[0] = f"{before}[{item}{head}{parts[0]}"
        parts[-1] = f"{ends[tail_of[-1]]}{close}]{after}"
        return parts


@dataclass
class Result:
    """Iteration time, its breakdown, throughput and what limits it."""

    iteration_time_s: float
    breakdown_s: dict[str, float]
    tflops_per_gpu: float  #: achieved model TFLOP/s per GPU (Megatron's definition, eq. 3)
    mfu: float  #: model FLOPs without recomputation / (time × GPUs × dense peak)
    percent_of_peak: float  #: tflops_per_gpu / dense peak × 100 (Megatron's "% of peak")
    tokens_per_s: float  #: transformer: tokens/s; vision: 0 (no tokens)
    training_time_days: float
    gpus: int
    parameters: float
    workload: dict[str, Any]
    placement: dict[str, Any]
    collectives: list[CollectiveResult]
    links: LinkResults | list[LinkResult]
    bottlenecks: list[str]
    #: read_GB_per_iteration (global batch x bytes per sample), read_demand_GBps (that per
    #: iteration before the resources stage) and read_achieved_GBps (every path limit), as the
    #: resources stage reports them; read_under_training_GBps and read_alone_GBps (network
    #: stage), checkpoint_GB, checkpoint_write_s
    storage: dict[str, float] = field(default_factory=dict)
    resources: dict[str, Any] | None = None  #: ``ResourceReport.to_dict()``
    warnings: list[str] = field(default_factory=list)
    #: cores_total, infra_fraction, by_task (share of cycles), training_fraction, saturated
    host_cpu: dict[str, Any] = field(default_factory=dict)
    #: offered load of each DPU engine (line, crypto, arm) on the busiest server: demand / capacity,
    #: so above 1 (100 %) the engine is over-subscribed and its work takes that many times as long
    #: (``designer.engine.dpu``); the timeline's ``dpu_util`` is the busy fraction, at most 1
    dpu: dict[str, float] = field(default_factory=dict)
    power_W: dict[str, float] = field(default_factory=dict)  #: gpu, server, adapters, switches, storage, total
    energy_kwh: float = math.nan  #: whole training run (power_W total x training time)
    samples_per_s: float = 0.0  #: global batch / iteration time (transformer: sequences/s)
    #: estimated per-GPU memory (``workload.memory_per_gpu_GB``); None when parameters are not given
    memory_per_gpu_GB: float | None = None
    #: that estimate by part (``workload.memory_parts``, GB): weights, gradients, optimizer,
    #: activations, embedding, output_layer, overhead; they add up to ``memory_per_gpu_GB``
    #: (empty when it is None)
    memory_parts_GB: dict[str, float] = field(default_factory=dict)
    #: how the activations part is counted (``workload.MemoryParts``): recompute (the mode in
    #: words), in_flight (micro-batches the busiest stage holds), kept_layers (its layers kept on the
    #: GPU, the rest offloaded); empty when the estimate is None
    memory_activations: dict[str, Any] = field(default_factory=dict)
    #: the GPU's memory against which ``memory_per_gpu_GB`` is checked (``workload.gpu_memory_GB``:
    #: the catalog's ``memory_GB``, GiB as vendors quote it, in GB of 10^9 bytes); None when the
    #: catalog gives none
    gpu_memory_GB: float | None = None
    #: the CPU optimizer step of ``workload.optimizer_cpu_offload`` by its parts
    #: (``workload.optimizer_offload_times``): params (whose optimizer runs on the host), d2h_s,
    #: cpu_step_s, h2d_s, overlapped (``overlap_cpu_optimizer_d2h_h2d``), host_link_GBps and
    #: host_memory_GBps (per GPU) it used; ``breakdown_s["optimizer_offload"]`` is what the
    #: iteration waits for. Empty without offload
    optimizer_offload: dict[str, Any] = field(default_factory=dict)
    #: training jobs sharing the fabric (``scenario.tenants``; with several, every other figure is
    #: the slowest job's, see ``pipeline.run``): jobs, placement (packed/scattered),
    #: servers_per_job, idle_servers, slowest_job; the slowest job's worst data-parallel group rate
    #: with every job's traffic and with its own only (dp_rate_shared_GBps, dp_rate_alone_GBps;
    #: None when no DP traffic crosses servers), its iteration time both ways
    #: (iteration_shared_s, iteration_alone_s) and slowdown_pct = 100 (shared / alone − 1);
    #: one job: alone = shared, slowdown 0
    tenants: dict[str, Any] = field(default_factory=dict)
    #: communication time per iteration that overlap hides, per dimension (tp, pp, cp, ep, dp;
    #: ``timing.Timing.hidden_s``), beside the exposed parts in ``breakdown_s`` (tp_comm ...
    #: dp_exposed); 0 where the dimension's overlap is off or it has no communication
    hidden_s: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (numpy scalars become Python ones, infinities None); the links are
        written from their arrays (:meth:`LinkResults.to_json`)."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.to_json() if isinstance(value, LinkResults) else clean(value)
        return out

    def json_text(self, extra: dict[str, Any] | None = None, indent: int | None = 1) -> str:
        """``json.dumps({**self.to_json(), **extra}, indent=indent)``, the same text, made without
        a dict per link: the rest goes through json.dumps with a marker where the links go, and
        the marker is replaced by :meth:`LinkResults.json_text` (``run --json`` of a 131k-GPU
        design: ~385k links). Links given as a plain list, or an ``extra`` that hides them, take
        json.dumps itself."""
        extra = extra or {}
        links = self.links
        if indent is None or "links" in extra or not isinstance(links, LinkResults) \
                or links._ids_written_as_is() is None or not links._phases_are_strings():
            return json.dumps({**self.to_json(), **extra}, indent=indent)
        data = {f.name: _LINKS_MARK if f.name == "links" else clean(getattr(self, f.name))
                for f in fields(self)}
        text = json.dumps({**data, **extra}, indent=indent)
        mark = json.dumps(_LINKS_MARK)
        if text.count(mark) != 1:  # the marker's text elsewhere too (a hostile name, say)
            return json.dumps({**self.to_json(), **extra}, indent=indent)
        before, _, after = text.partition(mark)
        return "".join(links._json_parts(indent, 1, before, after))

    def phase_busy_s(self) -> dict[str, float]:
        """Seconds per iteration each communication phase moves data: the sum of its collectives'
        ``time_s x calls_per_iteration`` (a collective belongs to the phase its name starts with:
        ``dp_allreduce`` to ``dp``), whether or not compute hides it. Derived from the collectives
        the engine reports (``collectives``); a phase with none (``storage``: reads spread over
        the whole step) is not in the dict."""
        busy: dict[str, float] = {}
        for c in self.collectives:
            phase = c.name.split("_", 1)[0]
            busy[phase] = busy.get(phase, 0.0) + float(c.time_s) * int(c.calls_per_iteration)
        return busy

    def link_mean_utilization(self) -> np.ndarray:
        """Each link's utilization averaged over the iteration (0..1, in ``links`` order): its
        peak utilization times the share of the iteration its busiest phase moves data,
        ``utilization x min(1, phase_busy_s[phase] / iteration_time_s)``.

        Derivation: a link's utilization over the step is ``u(t)``; in its busiest phase it is
        the peak ``u_p`` for that phase's ``t_p`` seconds (:meth:`phase_busy_s`), so its mean
        ``(1/T) integral u dt >= u_p t_p / T``, equal when no other phase loads it (a rail cable
        carries the data-parallel ring only). Other phases' lighter traffic is not counted: a
        lower estimate, never above the peak. A phase with no collective (``storage``, whose
        reads run the whole step) and a link no phase loads keep their figure (share 1 and 0
        utilization). This is what the canvas colours by after a run: a cable full for the 2 %
        of the step the gradient all-reduce takes is 2 % busy, not "100 % (dp)"."""
        links = self.links
        if isinstance(links, LinkResults):
            util, phases = links.utilization, links.phase
        else:
            util = np.array([l.utilization for l in links], dtype=float)
            phases = [l.phase for l in links]
        step = float(self.iteration_time_s)
        if not len(util) or not math.isfinite(step) or step <= 0:
            return np.asarray(util, dtype=float).copy()
        busy = self.phase_busy_s()
        names = sorted(set(phases))
        share = {ph: min(1.0, busy[ph] / step) if ph in busy else 1.0 for ph in names}
        table = np.array([share[ph] for ph in names], dtype=float)
        at = dict(zip(names, range(len(names))))
        codes = np.fromiter(map(at.__getitem__, phases), dtype=np.int64, count=len(phases))
        return cast(np.ndarray, np.asarray(util, dtype=float) * table[codes])

    def top_links(self, n: int = 10) -> list[LinkResult]:
        if isinstance(self.links, LinkResults):
            return self.links.top(n)
        return sorted(self.links, key=lambda l: -l.utilization)[:n]


_LINKS_MARK = "\x00links written from arrays\x00"


def dumps_json(data: dict[str, Any], indent: int | None = 1) -> str:
    """``json.dumps(data, indent=indent)`` of a ``Result.to_json()`` dict, the same text, fast.

    With an indent, Python's json module encodes in pure Python (its C encoder only writes without
    one): 0.5 s for the 42k links of a 16k-GPU design. Here the rest of the dict goes through
    json.dumps and the ``links`` list, a flat list of ``{"id", "utilization", "phase"}``, is written
    line by line from C-encoded strings and ``float.__repr__``, as json.dumps writes them."""
    links = data.get("links")
    if indent is None or not isinstance(links, list) or not links or not all(
            type(l) is dict and l.keys() == {"id", "utilization", "phase"} and type(l["id"]) is str
            and type(l["phase"]) is str for l in links):
        return json.dumps(data, indent=indent)
    pad1, pad2, pad3 = " " * indent, " " * 2 * indent, " " * 3 * indent
    text = json.dumps({**data, "links": _LINKS_MARK}, indent=indent)
    enc = json.encoder.encode_basestring_ascii
    item = f"{{\n{pad3}\"id\": %s,\n{pad3}\"utilization\": %s,\n{pad3}\"phase\": %s\n{pad2}}}"
    body = f",\n{pad2}".join(item % (enc(l["id"]), _number(l["utilization"]), enc(l["phase"]))
                             for l in links)
    return text.replace(json.dumps(_LINKS_MARK), f"[\n{pad2}{body}\n{pad1}]", 1)


def _number(v: Any) -> str:
    """A number as json.dumps writes it (None as null)."""
    if v is None:
        return "null"
    if type(v) is float:
        return float.__repr__(v) if math.isfinite(v) else json.dumps(v)
    return json.dumps(v)


def clean(value: Any) -> Any:
    """JSON-able copy: dataclass instances become dicts of their fields, numpy scalars Python
    ones, infinities and NaN None."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: clean(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, LinkResults):
        return value.to_json()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value
