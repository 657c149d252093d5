"""Host-managed vs SmartNIC vs DPU-offloaded: one design run in the three modes, the differences
and why.

``"host"``: every server host-managed (plain NICs; a DPU works as a plain NIC), the host CPU runs
the network, storage, crypto and virtualization stacks. ``"smartnic"``: the host CPU runs the
stacks but every adapter works as a ConnectX SmartNIC: inline IPsec/kTLS crypto (RoCE stays
RDMA) and ASAP2 virtual-switch offload at the adapter's measured crypto rate, no Arm services (the
buyer's real baseline: ConnectX-7 at ~25 W vs BlueField-3 at ~150 W). ``"dpu"``: every server's
BlueField DPUs run them. A server with drawn DPUs keeps its layout (DGX SuperPOD: ConnectX on the
compute rails as SmartNICs, the BlueField DPUs for storage and north-south run the Arm services);
only a server without any DPU gets each NIC modelled as the catalog DPU of the same line rate
(scenario ``nic_as_dpu``, see :func:`designer.engine.resources_adapter.dpu_for_nic`); the notes
say which layout each run assumes and which Arm-path figures are assumptions. Adapter power
follows the mode: host-managed and SmartNIC runs price each drawn DPU as the ConnectX of the same
line rate (:func:`designer.engine.resources_adapter.nic_for_dpu`). ``"design"``: the design's own
per-server mix, when it has one (``scenario.per_server``).

Deltas are ``dpu − host`` (absolute and in % of host), as before; ``Comparison.mode_deltas`` adds
``smartnic − host`` and ``dpu − smartnic`` with the same keys, and ``Comparison.modes`` the power
and cost of each mode side by side. Each iteration-time part that differs gets
a reason: the bottleneck sentence of the run where the part is larger. Besides, a reason line says
how the host infrastructure share moved, how the cores left for host data loading moved when the
loaders lack cores in either run (offloading the stacks hands their cores to the loaders), and
why the energy changed. The GUI and the report use these numbers through :func:`compare`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from designer.engine import pipeline
from designer.engine.cache import EngineCache
from designer.engine.resources import INFRA_TASKS
from designer.engine.resources_adapter import dpu_for_nic
from designer.engine.result import BREAKDOWN_KEYS, Result, clean

#: scenario settings of each compared run
SCENARIO_SETTINGS: dict[str, dict[str, Any]] = {
    "host": {"offload": "host", "per_server": {}},
    "smartnic": {"offload": "smartnic", "per_server": {}},
    "dpu": {"offload": "dpu", "per_server": {}, "nic_as_dpu": True},
}
LABEL = {"host": "host-managed", "smartnic": "SmartNIC-offloaded", "dpu": "DPU-offloaded",
         "design": "design's mix"}
#: the three offload modes, in the order they are shown
MODES = ("host", "smartnic", "dpu")
#: ``Comparison.mode_deltas`` keys: (name, from run, to run)
MODE_PAIRS = (("smartnic_vs_host", "host", "smartnic"), ("dpu_vs_host", "host", "dpu"),
              ("dpu_vs_smartnic", "smartnic", "dpu"))
#: top-level figures compared (``Result`` attributes; all but ``infra_fraction``)
METRICS = ("iteration_time_s", "tflops_per_gpu", "mfu", "training_time_days", "energy_kwh",
           "infra_fraction")
#: a breakdown part differs when the runs differ by more than this share of the host iteration
MIN_DIFFERENCE = 1e-3
#: bottleneck sentences that explain each resources-stage part (lower-case substrings)
REASON_OF = {"host_cpu_slowdown": "host cpu on", "dpu_slowdown": "engine on", "data_stall": "data stall",
             "straggler": "stragglers", "checkpoint": "checkpoints", "dp_exposed": "dp ",
             "tp_comm": "tp all-reduce", "pp_comm": "pipeline send"}
#: share of host cycles on infrastructure the DPU vendor literature quotes. Source: the vendor
#: article "AIトレーニング加速ソリューション: Mellanox DPU と GPU クラスタの統合" (Japanese;
#: /work/shared/seeds/001_f73ecf51f14a319d.txt): "according to industry analysis, in a typical AI
#: cluster 25-40% of host CPU cycles are consumed by infrastructure tasks rather than computation";
#: its Dutch edition (/work/shared/seeds/000_506e6e8d6d09b438.txt, "AI Training Acceleration
#: Oplossing: Integratie van Mellanox DPU- en GPU-clusters") names the same consumers (TCP/IP
#: stacks, storage drivers, virtualization, security isolation and multi-tenancy) without a figure.
#: A claim the product tests, not a measurement: the article cites no primary study.
VENDOR_CLAIM = (0.25, 0.40)
#: cores for data loading must move by at least this much (per server) to be worth a line
MIN_CORES = 0.05


@dataclass
class Comparison:
    runs: dict[str, Result]  #: "host", "dpu" and, for a per-server mix, "design"
    deltas: dict[str, Any]  #: metric -> {"host", "dpu", "delta", "percent"}; "breakdown_s" -> same per part
    reasons: list[str]  #: one sentence per difference (DPU vs host)
    notes: list[str] = field(default_factory=list)  #: how the runs were modelled
    #: "smartnic_vs_host", "dpu_vs_host", "dpu_vs_smartnic" -> deltas like ``deltas`` ({"host":
    #: from-value, "dpu": to-value, "delta", "percent"} per metric and breakdown part)
    mode_deltas: dict[str, Any] = field(default_factory=dict)
    #: mode -> {"adapters_W", "adapters_max_W", "adapters_typical_W", "power_W", "energy_kwh",
    #: "energy_cost", "iteration_time_s", "infra_fraction"}: the three modes side by side
    modes: dict[str, dict[str, float]] = field(default_factory=dict)
    #: why the SmartNIC run differs from the host run, and the DPU run from the SmartNIC run
    mode_reasons: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: r.to_json() for name, r in self.runs.items()}
        out.update(deltas=clean(self.deltas), reasons=list(self.reasons), notes=list(self.notes),
                   vendor_claim=self.vendor_claim(), mode_deltas=clean(self.mode_deltas),
                   modes=clean(self.modes), mode_reasons={k: list(v) for k, v in self.mode_reasons.items()})
        return out

    def vendor_claim(self) -> dict[str, Any]:
        lo, hi = VENDOR_CLAIM
        host, dpu = (self.runs[s].host_cpu.get("infra_fraction", 0.0) for s in ("host", "dpu"))
        nic = self.runs["smartnic"].host_cpu.get("infra_fraction", 0.0) if "smartnic" in self.runs else None
        mid = "" if nic is None else f"{100 * nic:.1f}% SmartNIC, "
        return {"claim_fraction": [lo, hi], "host_fraction": host, "dpu_fraction": dpu,
                "smartnic_fraction": nic, "in_claim": lo <= host <= hi,
                "text": f"vendor claim: {100 * lo:.0f}–{100 * hi:.0f}% of host cycles on "
                        f"infrastructure; this design: {100 * host:.1f}% host-managed, {mid}"
                        f"{100 * dpu:.1f}% DPU-offloaded",
                "verdict": verdict(self.runs["host"], self.runs["dpu"], self.runs.get("smartnic"))}


#: what each host task is, for the verdict
TASK_WORDS = {"network": "kernel TCP collectives", "storage": "the storage stack (NVMe-oF initiator, "
              "block IO, bounce copies)", "crypto": "software encryption", "virtualization":
              "the host virtual switch", "nccl_proxy": "NCCL proxy threads", "filesystem":
              "the parallel-filesystem client", "agents": "node agents", "irq": "interrupts",
              "firewall": "the firewall's connection tracking", "monitoring": "monitoring agents",
              "provisioning": "provisioning and infrastructure-management agents",
              "checkpoint_coding": "checkpoint compression and erasure coding"}
#: scenario switches that add host infrastructure work, named in the verdict when all are off
_SWITCHES = ("encryption, tenants > 1, parallel_fs_client, object_store_tls, k8s_agents, nccl_proxy, "
             "irq_handling, firewall_conntrack, monitoring_agents, provisioning_agents, "
             "checkpoint_compression, checkpoint_erasure_coding")


def verdict(host: Result, dpu: Result, smartnic: Result | None = None) -> str:
    """The vendor claim in words: whether this design's host-managed run is inside, below or
    above the 25–40% claim (``VENDOR_CLAIM``), which host stacks make up its share (largest
    first, those of at least 0.05% of cycles), and what the SmartNIC and DPU runs leave on the
    host. The one sentence the CLI, the app and the report show."""
    lo, hi = VENDOR_CLAIM
    share = float(host.host_cpu.get("infra_fraction", 0.0))
    where = "inside" if lo <= share <= hi else ("below" if share < lo else "above")
    tasks = sorted(((float(v), t) for t, v in host.host_cpu.get("by_task", {}).items()
                    if t in INFRA_TASKS and v >= 5e-4), reverse=True)
    if tasks:
        why = "; ".join(f"{TASK_WORDS.get(t, t)} {100 * v:.1f}%" for v, t in tasks)
        why = f"the host stacks that take it: {why}"
    else:
        why = (f"RDMA carries the collectives and storage with no host stack in the path, and no "
               f"switch that adds host work is on ({_SWITCHES})")
    left = [f"{LABEL[name]} {100 * float(r.host_cpu.get('infra_fraction', 0.0)):.1f}%"
            for name, r in (("smartnic", smartnic), ("dpu", dpu)) if r is not None]
    return (f"this design is {where} the vendor's {100 * lo:.0f}–{100 * hi:.0f}% claim: "
            f"{100 * share:.1f}% of host cycles go to infrastructure when host-managed; {why}; "
            f"left on the host: {', '.join(left)}")


def _value(r: Result, metric: str) -> float:
    if metric == "infra_fraction":
        return float(r.host_cpu.get("infra_fraction", 0.0))
    return float(getattr(r, metric))


def _delta(a: float, b: float) -> dict[str, float]:
    d = b - a
    pct = 100.0 * d / a if a and math.isfinite(a) and math.isfinite(b) else math.nan
    return {"host": a, "dpu": b, "delta": d, "percent": pct}


def _reason(part: str, host: Result, dpu: Result, d: float) -> str:
    """``part`` changes by ``d`` seconds: the bottleneck sentences behind it, larger run first."""
    key = REASON_OF.get(part)
    order = (("host", host), ("dpu", dpu)) if d < 0 else (("dpu", dpu), ("host", host))
    # the sentences without their remedies, which the runs' bottleneck lists give in full
    whys = [f"{LABEL[name]}: {why.split('; remedies:')[0]}" for name, r in order
            for why in [next((b for b in r.bottlenecks if key and key in b.lower()), "")] if why]
    sign = "+" if d > 0 else "−"
    text = f"{part} {sign}{abs(d):.3g} s per iteration with DPU offload"
    return f"{text} because {'; '.join(whys)}" if whys else text


def _host_reason(host: Result, dpu: Result) -> str | None:
    """How the infrastructure tasks' shares of host cycles moved (tasks moving under 0.05
    points are left out; data loading stays on the host and has its own line)."""
    a, b = host.host_cpu.get("by_task", {}), dpu.host_cpu.get("by_task", {})
    moved = [(t, b.get(t, 0.0) - a.get(t, 0.0)) for t in INFRA_TASKS
             if abs(b.get(t, 0.0) - a.get(t, 0.0)) >= 5e-4]
    if not moved:
        return None
    parts = ", ".join(f"{t} {100 * d:+.1f} pts" for t, d in moved)
    return (f"host CPU infrastructure share {100 * host.host_cpu['infra_fraction']:.1f}% → "
            f"{100 * dpu.host_cpu['infra_fraction']:.1f}% ({parts}): the DPU runs those stacks")


def loading(r: Result) -> dict[str, Any] | None:
    """The server group whose host data loading is tightest (fewest free cores beyond its need):
    ``load_cores_needed``, ``load_cores_free``, ``infra_cores`` ... of ``ResourceReport.groups``;
    None when no server loads data on its CPU."""
    groups = [g for g in (r.resources or {}).get("groups", []) if g.get("load_cores_needed", 0.0) > 0]
    return min(groups, key=lambda g: g["load_cores_free"] - g["load_cores_needed"], default=None)


def _loading_reason(host: Result, dpu: Result) -> str | None:
    """Host data loading short of cores in either run, and the cores offloading gave it."""
    a, b = loading(host), loading(dpu)
    if a is None or b is None:
        return None
    short = {name: g["load_cores_needed"] > g["load_cores_free"] for name, g in (("host", a), ("dpu", b))}
    moved = max(abs(b["load_cores_free"] - a["load_cores_free"]),
                abs(b["load_cores_needed"] - a["load_cores_needed"]))
    if not any(short.values()) or moved < MIN_CORES:
        return None
    if short["host"] and not short["dpu"]:
        outcome = "offloading frees enough cores: the loaders keep up"
    elif short["host"]:
        outcome = ("the loaders are short of cores in both runs: more CPU cores or decoding on the "
                   "GPU (e.g. NVIDIA DALI) would remove the stall")
    else:
        outcome = ("the offloaded run iterates faster, so its loaders must deliver more samples per "
                   "second than its cores allow")
    return (f"host CPU data loading: host-managed needs {a['load_cores_needed']:.1f} cores per "
            f"server with {a['load_cores_free']:.1f} free, DPU-offloaded {b['load_cores_needed']:.1f} "
            f"with {b['load_cores_free']:.1f} free (host network and storage stacks "
            f"{a['infra_cores']:.1f} → {b['infra_cores']:.1f} cores); {outcome}")


def _energy_reason(host: Result, dpu: Result) -> str | None:
    pa, pb = host.power_W.get("total", 0.0), dpu.power_W.get("total", 0.0)
    if not (math.isfinite(host.energy_kwh) and math.isfinite(dpu.energy_kwh)):
        return None
    t = 100 * (dpu.training_time_days / host.training_time_days - 1) if host.training_time_days else 0.0
    p = 100 * (pb / pa - 1) if pa else 0.0
    # a change that rounds to 0.0% is said as none, not as "-0.0%" (one precision per figure)
    time = "training time unchanged" if abs(t) < 0.05 else f"training time {t:+.1f}%"
    return (f"energy {100 * (dpu.energy_kwh / host.energy_kwh - 1):+.1f}%: {time}, "
            f"cluster power {p:+.1f}% (adapters {host.power_W.get('adapters', 0) / 1e3:.1f} → "
            f"{dpu.power_W.get('adapters', 0) / 1e3:.1f} kW)")


def _props_key(props: dict | None) -> str:
    return repr(sorted(props.items())) if props else ""


def server_layouts(design) -> list[tuple[Any, list, int]]:
    """The servers grouped by all the notes read of them: (the first server of a group, its
    NICs/DPUs in slot order, how many servers are alike), in the order the groups first come.
    Alike: the same model and figures, with NICs/DPUs of the same kinds, models and figures in
    the same order. A 20,448-server design is one group: the notes look at one server, not at
    every server three times (~2 s of its report)."""
    topo = design.topology
    groups: dict[tuple, list] = {}
    for srv in topo.servers():
        kids = topo.attached(srv.id)
        key = (srv.kind, srv.model, _props_key(srv.props),
               tuple((c.kind, c.model, _props_key(c.props)) for c in kids))
        found = groups.get(key)
        if found is None:
            groups[key] = [srv, kids, 1]
        else:
            found[2] += 1
    return [(srv, kids, n) for srv, kids, n in groups.values()]


def _nic_notes(design, catalog, layouts=None) -> list[str]:
    """Which adapter layout each run assumes: servers without a DPU get each NIC as the catalog
    DPU of the same line rate in the DPU run; servers with drawn DPUs keep their layout (NICs on
    the rails as SmartNICs, the DPUs run the Arm services), and the host-managed and SmartNIC runs
    price each drawn DPU as the ConnectX of the same line rate. Counted per group of alike
    servers (:func:`server_layouts`) times its size."""
    from designer.engine.resources_adapter import nic_for_dpu

    counts: dict[tuple[str, str, float], int] = {}
    kept: dict[tuple[str, str], int] = {}
    priced: dict[tuple[str, str], int] = {}
    alts: dict[tuple[str, str, Any], str] = {}  # (DPU model, its props, server nic_model) -> NIC id
    for srv, kids, alike in layouts if layouts is not None else server_layouts(design):
        f = catalog.resolve(srv)
        drawn = [c for c in kids if c.kind == "dpu"]
        if drawn:
            nics = sorted({c.model for c in kids if c.kind == "nic"})
            for c in drawn:
                key = (c.model, ", ".join(nics))
                kept[key] = kept.get(key, 0) + alike
                ak = (c.model, repr(sorted((c.props or {}).items())), f.get("nic_model"))
                if ak not in alts:  # one catalog scan per kind of DPU, not per drawn DPU
                    alt = nic_for_dpu(catalog, catalog.resolve(c), f.get("nic_model"))
                    alts[ak] = str(alt.get("id", "a NIC of the same line rate"))
                pk = (c.model, alts[ak])
                priced[pk] = priced.get(pk, 0) + alike
            continue
        for c in (c for c in kids if c.kind == "nic"):
            nic = catalog.resolve(c)
            d = dpu_for_nic(catalog, nic, f.get("dpu_model"))
            nkey = (c.model, str(d.get("id", "DPU")), float(nic.get("max_bandwidth_Gbps") or 0))
            counts[nkey] = counts.get(nkey, 0) + alike
    out = [f"the DPU-offloaded run models each of the {n} {nic} NICs as a {dpu} DPU of the same "
           f"line rate ({rate:g} Gb/s): the design draws no DPU on those servers" for (nic, dpu, rate), n in counts.items()]
    out += [f"the DPU-offloaded run keeps the drawn layout: {n} {dpu} DPUs run the Arm services"
            + (f", the {nics} NICs stay on their rails as SmartNICs (inline crypto, ASAP2)" if nics else "")
            for (dpu, nics), n in kept.items()]
    out += [f"the host-managed and SmartNIC runs price each of the {n} {dpu} as a {nic} (the NIC one "
            f"would buy to run without Arm services) and count its power"
            for (dpu, nic), n in priced.items()]
    return out


def _assumption_notes(design, catalog, layouts=None) -> list[str]:
    """Arm kernel-path rates of the DPUs the DPU run uses, each marked as its source marks it:
    assumed figures drive the DPU headlines and are said so (models/hardware/dpu.toml)."""
    from designer.engine.resources_adapter import dpu_for_nic, dpu_model_figures

    seen: dict[str, str] = {}
    for srv, kids, _ in layouts if layouts is not None else server_layouts(design):
        f = catalog.resolve(srv)
        drawn = [catalog.resolve(c) | {"id": c.model} for c in kids if c.kind == "dpu"]
        used = drawn or [dpu_for_nic(catalog, catalog.resolve(c), f.get("dpu_model"))
                         for c in kids if c.kind == "nic"]
        for e in used:
            model = str(e.get("id", ""))
            if model in seen:
                continue
            arm, _ = dpu_model_figures(catalog, e)
            try:
                src = str(catalog.get("dpu", model).get("sources", {}).get("arm_tcp_Gbps", ""))
            except KeyError:
                src = ""
            kind = ("ASSUMED (no measurement found)" if src.startswith("assumed") else
                    "measured upper bound (pktgen, no TCP/TLS/filesystem work)" if "upper bound" in src
                    else "from the Arm core-GHz scaling of the BlueField-2 measurement" if not src else "sourced")
            seen[model] = (f"{model} Arm kernel path {arm:g} Gb/s at 1500-byte frames: {kind}; the "
                           f"Arm-core services (filesystem client, object-store proxy, NVMe/TCP under "
                           f"SNAP, agents) scale with it")
    return list(seen.values())


#: agent switches -> (their cost figure in models/costs/host_cpu.toml, where they run when offloaded)
_AGENT_FIGURES = {"k8s_agents": ("k8s_agent_cores", "on the DPU's Arm cores"),
                  "provisioning_agents": ("provisioning_agent_cores", "on the DPU's Arm cores"),
                  "monitoring_agents": ("monitoring_agent_cores", "on the host")}


def _agent_notes(scenario: dict[str, Any], catalog) -> list[str]:
    """One note per agent switch that is on: its host cores per server and the kind of that
    figure as its source gives it (an assumed figure is said so), and where a DPU run puts it."""
    from designer.topology.catalog import figure_kind

    costs = catalog.costs("host_cpu")
    out = []
    for switch, (name, offloaded) in _AGENT_FIGURES.items():
        if not scenario.get(switch) or name not in costs:
            continue
        kind = figure_kind(str(costs[name].get("source", "")))
        out.append(f"{switch}: {float(costs[name]['value']):g} host cores per server "
                   f"({'ASSUMED: no published per-node figure' if kind == 'assumed' else kind}; "
                   f"models/costs/host_cpu.toml {name}); in the DPU run {offloaded}")
    return out


def _deltas(a: Result, b: Result) -> dict[str, Any]:
    out: dict[str, Any] = {m: _delta(_value(a, m), _value(b, m)) for m in METRICS}
    out["breakdown_s"] = {k: _delta(a.breakdown_s.get(k, 0.0), b.breakdown_s.get(k, 0.0))
                          for k in BREAKDOWN_KEYS}
    return out


def mode_figures(r: Result) -> dict[str, float]:
    """Power and cost of one mode's run: adapter power as the energy counts it (``adapters_W``:
    maxima, or typical power per scenario ``adapter_power``), at maxima (``adapters_max_W``) and at
    typical power (``adapters_typical_W``, the maximum for an adapter without a typical figure),
    cluster power, energy and its cost (``models/costs/energy.toml`` price), iteration time and
    host infrastructure share."""
    energy = (r.resources or {}).get("energy", {})
    price = energy.get("run_cost", 0.0) / energy["run_kWh"] if energy.get("run_kWh") else math.nan
    return {"adapters_W": float(r.power_W.get("adapters", 0.0)), "power_W": float(r.power_W.get("total", 0.0)),
            "adapters_max_W": float(energy.get("adapters_max_W", r.power_W.get("adapters", 0.0))),
            "adapters_typical_W": float(energy.get("adapters_typical_W", r.power_W.get("adapters", 0.0))),
            "energy_kwh": float(r.energy_kwh), "energy_cost": float(r.energy_kwh) * price,
            "iteration_time_s": float(r.iteration_time_s),
            "infra_fraction": float(r.host_cpu.get("infra_fraction", 0.0))}


def _mode_reasons(a: Result, b: Result, names: tuple[str, str]) -> list[str]:
    """Why run ``b`` differs from run ``a``: each iteration part that moves, with the bottleneck
    sentence of the run where it is larger, and the power change."""
    out = []
    for k, v in _deltas(a, b)["breakdown_s"].items():
        if abs(v["delta"]) <= MIN_DIFFERENCE * a.iteration_time_s:
            continue
        key = REASON_OF.get(k)
        where = (names[0], a) if v["delta"] < 0 else (names[1], b)
        why = next((x for x in where[1].bottlenecks if key and key in x.lower()), "")
        text = f"{k} {'+' if v['delta'] > 0 else '−'}{abs(v['delta']):.3g} s per iteration"
        out.append(f"{text} because {LABEL[where[0]]}: {why.split('; remedies:')[0]}" if why else text)
    ha, hb = a.host_cpu.get("infra_fraction", 0.0), b.host_cpu.get("infra_fraction", 0.0)
    if abs(hb - ha) >= 5e-4:  # the host-share move, task by task
        ta, tb = a.host_cpu.get("by_task", {}), b.host_cpu.get("by_task", {})
        parts = ", ".join(f"{t} {100 * (tb.get(t, 0.0) - ta.get(t, 0.0)):+.1f} pts" for t in INFRA_TASKS
                          if abs(tb.get(t, 0.0) - ta.get(t, 0.0)) >= 5e-4)
        out.append(f"host CPU infrastructure share {100 * ha:.1f}% → {100 * hb:.1f}% ({parts})")
    pa, pb = a.power_W.get("adapters", 0.0), b.power_W.get("adapters", 0.0)
    if abs(pb - pa) > 0.5:
        out.append(f"adapters {pa / 1e3:.2f} → {pb / 1e3:.2f} kW ({LABEL[names[0]]} → {LABEL[names[1]]})")
    return out


def compare(design, catalog, *, scenario: dict[str, Any] | None = None, seed: int | None = None,
            cache: EngineCache | None = None, **overrides: Any) -> Comparison:
    """Run ``design`` host-managed, SmartNIC-offloaded and DPU-offloaded (and as its own mix)
    and compare them. Every run shares ``cache`` (the caller's
    :class:`~designer.engine.cache.EngineCache`, else one of its own for this comparison): the
    modes differ only in their scenario, so the fabric and its routes are built once."""
    cache = cache if cache is not None else EngineCache()
    base = {**design.scenario, **(scenario or {})}
    runs = {name: pipeline.run(design, catalog, scenario={**base, **s}, seed=seed, cache=cache,
                               **overrides)
            for name, s in SCENARIO_SETTINGS.items()}
    if base.get("per_server"):
        runs["design"] = pipeline.run(design, catalog, scenario=base, seed=seed, cache=cache, **overrides)
    setting = str(base.get("adapter_power", "auto"))
    if setting == "auto" and len({_basis(r) for r in runs.values()}) > 1:
        # typical power only where every adapter of every mode has a typical figure: a run
        # priced at typical power beside another at maxima would tilt the energy line
        base = {**base, "adapter_power": "max"}
        for name, s in (*SCENARIO_SETTINGS.items(), ("design", {})):
            if name in runs and _basis(runs[name]) != "max":
                runs[name] = pipeline.run(design, catalog, scenario={**base, **s}, seed=seed,
                                          cache=cache, **overrides)
    host, dpu = runs["host"], runs["dpu"]
    deltas: dict[str, Any] = {m: _delta(_value(host, m), _value(dpu, m)) for m in METRICS}
    deltas["breakdown_s"] = {k: _delta(host.breakdown_s.get(k, 0.0), dpu.breakdown_s.get(k, 0.0))
                             for k in BREAKDOWN_KEYS}
    deltas["dpu_utilization"] = dict(dpu.dpu)
    reasons = [_reason(k, host, dpu, v["delta"]) for k, v in deltas["breakdown_s"].items()
               if abs(v["delta"]) > MIN_DIFFERENCE * host.iteration_time_s]
    reasons += [r for r in (_host_reason(host, dpu), _loading_reason(host, dpu),
                            _energy_reason(host, dpu)) if r]
    mode_deltas = {name: _deltas(runs[a], runs[b]) for name, a, b in MODE_PAIRS}
    modes = {m: mode_figures(runs[m]) for m in MODES}
    mode_reasons = {name: _mode_reasons(runs[a], runs[b], (a, b)) for name, a, b in MODE_PAIRS
                    if name != "dpu_vs_host"}
    layouts = server_layouts(design)
    notes = (_nic_notes(design, catalog, layouts)
             + _smartnic_notes(design, catalog, layouts, str(base.get("crypto_offload", "ipsec-crypto")))
             + _assumption_notes(design, catalog, layouts) + _agent_notes(base, catalog)
             + _power_notes(runs, setting, catalog))
    return Comparison(runs, deltas, reasons, notes, mode_deltas, modes, mode_reasons)


def _basis(r: Result) -> str:
    """Which adapter power a run's energy counts ("max" or "typical"; resources EnergyReport)."""
    return str((r.resources or {}).get("energy", {}).get("adapter_power", "max"))


def _power_figures(model: str, catalog) -> str:
    """``model``'s maximum and typical power with the kind each source gives it, e.g. "150 W
    maximum, assumed; typical not found" (the catalog's dpu or nic entry; "" when neither has it)."""
    from designer.topology.catalog import figure_kind

    for kind in ("dpu", "nic"):
        try:
            entry = catalog.get(kind, model)
        except KeyError:
            continue
        parts = []
        for field, what in (("power_W", "maximum"), ("typical_power_W", "typical")):
            try:
                src = figure_kind(catalog.source_of(kind, model, field))
            except KeyError:  # a user catalog entry without the figure
                src = "not given"
            value = float(entry.get(field) or 0)
            parts.append(f"{what} {value:g} W, {src}" if value else f"{what} {src}")
        return "; ".join(parts)
    return ""


def _power_notes(runs: dict[str, Result], setting: str, catalog=None) -> list[str]:
    """Which adapter power the energy of the runs counts, and why: the adapter models without a
    typical figure when the maxima are counted, each with its maximum and typical figure and
    their kinds (``catalog``; without it the model names only)."""
    bases = {_basis(r) for r in runs.values()}
    missing = sorted({m for r in runs.values()
                      for m in (r.resources or {}).get("energy", {}).get("adapters_without_typical", ())})
    named = [f"{m} ({figs})" if catalog is not None and (figs := _power_figures(m, catalog)) else m
             for m in missing]
    if bases == {"typical"}:
        return [f"energy counts typical adapter power (typical_power_W; scenario adapter_power="
                f"{setting})" + (f"; the maximum for {', '.join(named)}, which have none" if missing else "")]
    why = (f": no typical figure for {', '.join(named)}" if missing and setting == "auto" else "")
    return [f"energy counts adapter maxima (power_W; scenario adapter_power={setting}){why}"]


def _smartnic_notes(design, catalog, layouts=None, protocol: str = "ipsec-crypto") -> list[str]:
    """How the SmartNIC run models the adapters: their own crypto rate, or their crypto-enabled
    OPN's at the measured fraction of line rate."""
    from designer.engine.resources import cost_figures
    from designer.engine.resources_adapter import smartnic_crypto_Gbps

    from designer.engine.resources_adapter import nic_for_dpu

    fraction = cost_figures(catalog)["inline_crypto_fraction_of_line"]
    seen: dict[str, float] = {}
    done: set[tuple[str, str, Any]] = set()  # (kind, model, server nic_model): a DPU's key in
    for srv, kids, _ in layouts if layouts is not None else server_layouts(design):
        f = catalog.resolve(srv)  # ``seen`` is "model (as NIC)" for a DPU, never its model
        for c in kids:
            if c.kind in ("nic", "dpu") and (c.kind, c.model, f.get("nic_model")) not in done:
                done.add((c.kind, c.model, f.get("nic_model")))
                e = catalog.resolve(c)
                if c.kind == "dpu":  # bought as the ConnectX of the same line rate
                    e = nic_for_dpu(catalog, e, f.get("nic_model"))
                    m = f"{c.model} (as {e.get('id', 'a NIC')})"
                else:
                    m = c.model
                seen[m] = smartnic_crypto_Gbps(e, fraction, protocol)
    how = {"ipsec-crypto": f"IPsec crypto offload; {100 * fraction:.1f}% of line rate when the catalog "
                           f"gives none, the measured 193 of 400 Gb/s",
           "ipsec-packet": "IPsec packet offload, the generation's ipsec_packet_Gbps",
           "ktls": "kTLS offload, the generation's ktls_Gbps"}.get(protocol, protocol)
    return [f"the SmartNIC run uses each {m} as a ConnectX SmartNIC: inline crypto {rate:.0f} Gb/s "
            f"(its crypto-enabled part; {how}), ASAP2 switching, RDMA and SHARP kept, no Arm services"
            for m, rate in seen.items()]

