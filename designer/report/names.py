"""One name per figure (issue 23): the names the window (Engine results, Timelines, status bar),
the report and the exports give to figures that a reader could take for one another. No Qt;
import it from anywhere.

* ``STEADY_DAYS``: the engine's training time, the token budget at the steady-state iteration
  rate (``Result.training_time_days``).
* ``TIMELINE_DAYS``: the timeline's play-out of the whole run with jitter, data stalls,
  checkpoints, failures and the work they lose (``TimelineSummary.training_time_days``).
* ``TIMELINE_ITERATION``: ``TimelineSummary.mean_iteration_s``, (iteration + data stall time) /
  iterations run, the checkpoint writes left out (the timeline counts each write as its own
  checkpoint time); the engine's one steady-state step is ``ITERATION``, which spreads the
  checkpoint writes over the iterations (its "Checkpoints (amortized)" part). So the timeline's
  mean is the steady step less that part, give or take the drawn stragglers, and can be below
  it: a different figure, not a slower or faster run (:func:`iteration_note` says so).
* Links and cables: a *link* is one line on the canvas (``Topology.links``); it is ``lanes``
  physical *cables* when Ethernet/InfiniBand, none when NVLink/PCIe
  (``designer.services.cabling.cable_count``).
"""

ITERATION = "Iteration time (s)"
STEADY_DAYS = "Training time, steady state (days)"
TIMELINE_DAYS = "Training time with checkpoints and failures (days)"
TIMELINE_ITERATION = "Mean iteration, checkpoint writes apart, timeline (s)"
#: ``Result.tflops_per_gpu``: achieved model TFLOP/s per GPU (run, compare, app, report)
TFLOPS = "TFLOP/s per GPU"
#: ``Result.energy_kwh`` / 1000: the whole training run at training-load power (compare, app,
#: report; ``energy_MWh`` in the sweep and optimize files)
ENERGY = "Energy of the run (MWh)"


def iteration_note(steady_s: float, checkpoint_s: float, timeline_s: float) -> str:
    """Why the timeline's mean iteration (``TIMELINE_ITERATION``) differs from the steady-state
    ``ITERATION``, with the figures (seconds): the steady step spreads the checkpoint writes over
    the iterations, the timeline counts them apart; stragglers are drawn per iteration there."""
    from designer.services.style import figure

    return (f"{ITERATION[:-4]} ({figure('seconds', steady_s)} s) includes the checkpoint writes spread "
            f"over the iterations ({figure('seconds', checkpoint_s)} s each); the timeline's mean "
            f"iteration ({figure('seconds', timeline_s)} s) leaves them out (each write is its own "
            "checkpoint time there) and draws the stragglers iteration by iteration, so it can be "
            "the lower of the two")

import re
from typing import Any

#: what each adapter engine of ``designer.engine.resources.DPU_ENGINES`` does, as a row names it
#: (the engine's own keys are "line", "crypto", "arm", "dram"; see resources._ENGINE_WORK)
ENGINE_LABEL = {"line": "Packet processing (line rate)", "crypto": "Crypto engine (inline encryption)",
                "arm": "Arm cores (DPU services)", "dram": "DPU memory bandwidth (Arm data paths)"}


def engine_label(key: str) -> str:
    """A planner's name of an adapter engine key; an unknown key as words."""
    return ENGINE_LABEL.get(key, key.replace("_", " "))


def _breakdown_labels() -> dict[str, str]:
    from designer.engine.result import BREAKDOWN_LABEL

    return {k: v[:1].lower() + v[1:] if not v.startswith(("TP", "DP", "PP")) else v
            for k, v in BREAKDOWN_LABEL.items()}


_KEY = re.compile(r"\b(compute|tp_comm|pp_comm|cp_comm|ep_comm|dp_exposed|bubble|host_cpu_slowdown|"
                  r"dpu_slowdown|data_stall|straggler|checkpoint|activation_offload|optimizer_offload)\b(?= [+−-]\d)|"
                  r"\b(host_cpu_slowdown|dpu_slowdown|dp_exposed|tp_comm|pp_comm|cp_comm|ep_comm|data_stall|"
                  r"activation_offload|optimizer_offload)\b")
_GROUP = re.compile(r"\bserver group (\d+)\b")
_ENGINE = re.compile(r"\b(arm|dram|line)((?:/(?:arm|dram|line|crypto))*) engine( load)?\b")
#: an engine key inside a sentence ("DPU arm engine" -> "DPU Arm-core engine")
_ENGINE_WORD = {"arm": "Arm-core", "dram": "memory (DRAM)", "line": "packet-processing (line rate)",
                "crypto": "crypto"}

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
             "tenth")


def ordinal(n: int) -> str:
    """1 -> "first" ... 10 -> "tenth", then "11th", "22nd" ..."""
    if 1 <= n <= len(_ORDINALS):
        return _ORDINALS[n - 1]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def planner_words(text: str) -> str:
    """An engine sentence with its identifiers in words: breakdown keys (``host_cpu_slowdown``)
    as their ``BREAKDOWN_LABEL``, "server group 0" (the engine's index into the design's groups of
    alike servers) as people count ("the first server group"), adapter engine keys (``arm/dram engine load``) in words ("Arm-core and memory (DRAM)
    engine load")."""
    labels = _breakdown_labels()
    def key(m: re.Match) -> str:
        word = labels.get(m.group(1) or m.group(2), m.group(0))
        return word[:1].upper() + word[1:] if m.start() == 0 else word  # a sentence's first word

    text = _KEY.sub(key, text)
    text = _GROUP.sub(lambda m: f"the {ordinal(int(m.group(1)) + 1)} server group", text)
    return _ENGINE.sub(lambda m: " and ".join(_ENGINE_WORD[k] for k in (m.group(1) + m.group(2)).split("/"))
                       + " engine" + (m.group(3) or ""), text)


#: an engine key in a plot title, where room is short
_ENGINE_SHORT = {"arm": "Arm-core", "dram": "DPU memory", "line": "line-rate", "crypto": "crypto"}


def engine_word(key: str) -> str:
    """An adapter engine key as a plot title names it: ``"crypto"`` -> "crypto engine"."""
    return f"{_ENGINE_SHORT.get(key, key.replace('_', ' '))} engine"


_GROUP_WORD = {"tp": "TP", "dp": "DP", "pp": "PP", "cp": "CP", "ep": "EP"}
_OP_WORD = {"allreduce": "all-reduce", "reduce_scatter": "reduce-scatter", "allgather": "all-gather",
            "alltoall": "all-to-all", "sendrecv": "send/receive", "broadcast": "broadcast"}


def collective_label(name: str) -> str:
    """An engine collective's name in words: ``"dp_reduce_scatter"`` -> "DP reduce-scatter"
    (the NCCL operation names, hyphenated as NVIDIA's NCCL documentation writes them)."""
    head, _, op = name.partition("_")
    if head in _GROUP_WORD and op:
        return f"{_GROUP_WORD[head]} {_OP_WORD.get(op, op.replace('_', ' '))}"
    return name.replace("_", " ")


# --- figures the CLI's compare prints, for the app's Engine results and the report (one name and
# one value per fact: the labels and formats below are ``designer.commands.compare.format_table``'s
# and ``designer.commands.cost.format_costs``')
HIDDEN_BY_OVERLAP = "hidden by overlap"


def engine_load_notes(runs: dict[str, Any], label: dict[str, str]) -> list[str]:
    """What an adapter engine load above 100% means, per engine and mode (``runs``: mode ->
    ``Result``; ``label``: mode -> its name): the engine is asked for that many times its
    capacity, so the work it carries (the collectives it encrypts, the packets it switches)
    takes that many times as long (``engine.resources``: a stage over capacity stretches by
    demand / capacity); whether that costs time or stays hidden by overlap is the run's
    "Adapter over capacity" part (``breakdown_s["dpu_slowdown"]``): 0 means the stretched
    transfers still end before the compute they overlap does. The same sentences in ``compare``,
    the app and the report, so a "175%" never stands unexplained."""
    from designer.services.style import figure

    out = []
    for e in sorted({e for r in runs.values() for e in (r.dpu or {})}):
        over = [(m, r) for m, r in runs.items() if (r.dpu or {}).get(e, 0.0) > 1.0]
        if not over:
            continue
        loads = ", ".join(f"{label.get(m, m)} {100 * r.dpu[e]:.0f}%" for m, r in over)
        x = max(r.dpu[e] for _, r in over)
        slow = {m: (r.breakdown_s or {}).get("dpu_slowdown", 0.0) for m, r in over}
        host = [m for m, r in over if (r.breakdown_s or {}).get("host_cpu_slowdown", 0.0) > 0]
        if host:  # the slowest server's collectives wait on its host CPU: that part holds the cost
            cost = (f"in {', '.join(label.get(m, m) for m in host)} the host CPU sets the exposed network time "
                    "instead (Host CPU over capacity)")
        elif all(v <= 0 for v in slow.values()):
            cost = (f"{HIDDEN_BY_OVERLAP} (+0 s per iteration): the stretched transfers still end "
                    "before the compute they overlap")
        else:
            cost = "; ".join(f"{label.get(m, m)} " + (f"{HIDDEN_BY_OVERLAP} (+0 s per iteration)" if v <= 0 else
                                                      f"+{figure('seconds', v)} s per iteration "
                                                      "(Adapter over capacity)") for m, v in slow.items())
        out.append(f"{engine_label(e)} over 100% ({loads}): the engine is asked for up to {x:.2f}x "
                   f"what it can do, so the traffic it carries takes up to {x:.2f}x as long; {cost}")
    return out


#: the adapter power rows and the cluster power, as every view names them (the CLI's tables write
#: their rows with a small first letter, as all their rows)
ADAPTER_POWER_MAX = "Adapter power (kW, max)"
ADAPTER_POWER_TYPICAL = "Adapter power (kW, typical)"
#: said where the typical row is left out: no adapter of the runs has a typical figure
NO_TYPICAL = "no typical figure published for these adapters: their maxima are the only power figure"


def has_typical(runs: list[Any]) -> bool:
    """Whether some adapter of some run has a datasheet typical power figure (else the typical
    row would be "-" in every column and is left out)."""
    from designer.engine.compare import mode_figures

    for r in runs:
        f, e = mode_figures(r), (r.resources or {}).get("energy", {})
        if not (f["adapters_typical_W"] == f["adapters_max_W"] and e.get("adapters_without_typical")):
            return True
    return False


def power_rows(runs: list[Any]) -> list[tuple[str, list[str], str]]:
    """Adapter power at catalog maxima and at typical power and the cluster power on the basis
    the energy counts (``engine.compare.mode_figures``; ``Result.resources["energy"]
    ["adapter_power"]``) as (name, value per run, what it is), as ``dpu-designer compare`` prints
    them. Typical power: the adapter's datasheet typical figure where the catalog has one, else
    its maximum; the row is left out when no adapter of any run has a typical figure
    (:data:`NO_TYPICAL` says so where the table is explained), "-" in a run none of whose
    adapters has one."""
    from designer.engine.compare import mode_figures
    from designer.services.style import figure

    figs = [mode_figures(r) for r in runs]
    energy = [(r.resources or {}).get("energy", {}) for r in runs]
    basis = power_basis(energy)
    rows = [(ADAPTER_POWER_MAX, [f"{f['adapters_max_W'] / 1e3:.2f}" for f in figs],
             "NICs and DPUs at their catalog maximum power (datasheet maxima)")]
    if has_typical(runs):
        rows.append((ADAPTER_POWER_TYPICAL, ["-" if f["adapters_typical_W"] == f["adapters_max_W"]
                                             and e.get("adapters_without_typical")
                                             else f"{f['adapters_typical_W'] / 1e3:.2f}"
                                             for f, e in zip(figs, energy)],
                     "NICs and DPUs at their datasheet typical power (the maximum where the catalog "
                     "has no typical figure; '-': no adapter of the run has one)"))
    rows.append((cluster_power_label(energy), [figure("kW", f["power_W"] / 1e3) for f in figs],
                 "the cluster at training load, adapters counted at "
                 + ("typical power" if basis == "typ" else "their maxima") + ": the basis of the energy"))
    return rows


def power_basis(energies: list[dict]) -> str:
    """The adapter power the cluster power counts, as ``dpu-designer compare`` names it: "typ"
    where every run's energy counts typical power (scenario ``adapter_power = typical``) and some
    adapter has a typical figure below its maximum, else "max" (``energies``: each run's
    ``Result.resources["energy"]``)."""
    return "typ" if energies and all(e.get("adapter_power") == "typical" for e in energies) and any(
        e.get("adapters_typical_W") != e.get("adapters_max_W") for e in energies) else "max"


def cluster_power_label(energies: list[dict]) -> str:
    """The name of the cluster power at training load on its basis, as ``dpu-designer compare``
    prints it ("Cluster power (kW, max)"): the title page, the comparison and the power table."""
    return f"Cluster power (kW, {'typical' if power_basis(energies) == 'typ' else 'max'})"


def hidden_text(result: Any) -> str:
    """``Result.hidden_s`` in words, as ``dpu-designer run`` prints it ("tp 0.012 s, dp 0.3 s";
    "" when overlap hides nothing)."""
    return ", ".join(f"{d} {v:.3f} s" for d, v in (result.hidden_s or {}).items() if v > 0)


def tco_part_rows(c: Any) -> list[tuple[str, list[str], str]]:
    """The TCO's parts per mode as ``dpu-designer cost`` prints them under the TCO line."""
    from designer.services.cost import money

    m = list(c.modes.values())
    return [
        ("amortised CapEx / year", [money(x.tco.amortised_USD_per_year) for x in m],
         "the CapEx spread evenly over the lifetime"),
        ("energy / year (load x PUE)", [money(x.tco.energy_USD_per_year) for x in m],
         "cluster power at training load times the PUE, at the site's energy price"),
        ("space / year", [money(x.tco.space_USD_per_year) for x in m], "rack space at the site's price"),
        ("support / year", [money(x.tco.support_USD_per_year) for x in m], "support contracts"),
    ]


def assumed_share_line(c: Any) -> str:
    """How much of the CapEx rests on which price basis, e.g. "of which derived 67%, assumed
    22%, component <1%": ``services.cost.basis_share_text``, as ``dpu-designer cost`` prints it."""
    from designer.services.cost import basis_share_text

    return basis_share_text(c.bill)


# --- memory per GPU (issue 22): one name and one value in ``dpu-designer run``, the app's Engine
# results and the report
MEMORY_PER_GPU = "memory per GPU"
GPU_MEMORY = "GPU memory"
FITS = "fits in GPU memory"


def _field(result: Any, name: str) -> Any:
    """A field of a ``Result`` or of its JSON (``Result.to_json()``)."""
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def memory_part_name(key: str) -> str:
    """A key of ``Result.memory_parts_GB`` as every view names it ("output_layer" -> "output layer")."""
    return key.replace("_", " ")


def memory_parts_shown(result: Any) -> list[tuple[str, float]]:
    """The parts of the estimate a view prints, (key, GB), in the JSON's order: those that read
    above 0 at the one precision (``services.style.FIGURE_FORMAT["GB"]``)."""
    from designer.services.style import figure

    parts = _field(result, "memory_parts_GB") or {}
    return [(k, v) for k, v in parts.items() if figure("GB", v) not in ("0.0", "–")]


def fits_text(result: Any) -> str:
    """Whether the estimate fits the GPU's memory, in words: "yes", "no: 12.3 GB over" (at the
    one precision of both figures), "–" when either is unknown."""
    from designer.services.style import figure, shown_value

    need, have = shown_value("GB", _field(result, "memory_per_gpu_GB")), \
        shown_value("GB", _field(result, "gpu_memory_GB"))
    if need is None or not have:
        return "–"
    return "yes" if need <= have else f"no: {figure('GB', need - have)} GB over"


def activations_text(result: Any) -> str:
    """How the activations part is counted (``Result.memory_activations``), as ``run`` prints it
    under the memory line; "" when it is not known."""
    acts = _field(result, "memory_activations") or {}
    if not acts:
        return ""
    n = f"{acts['in_flight']:.3g}"
    return (f"activations of {acts['kept_layers']} layers x {n} micro-batch{'' if n == '1' else 'es'} "
            f"in flight, recompute {acts['recompute']}")


def memory_rows(result: Any) -> list[tuple[str, str, str, bool]]:
    """The memory rows every table shows: (name, value, what it is, indented): memory per GPU
    (GB), its parts (:func:`memory_parts_shown`), the GPU's memory (``Result.gpu_memory_GB``) and
    whether the estimate fits (:func:`fits_text`); [] when the estimate is not known (no
    parameters)."""
    from designer.services.style import figure

    total = _field(result, "memory_per_gpu_GB")
    if total is None:
        return []
    rows = [(f"{MEMORY_PER_GPU} (GB)", figure("GB", total),
             "estimated peak per GPU (busiest pipeline stage): the sum of its parts below "
             "(workload.memory_parts; Megatron-LM's estimator)", False)]
    rows += [(memory_part_name(k), figure("GB", v), f"memory_parts_GB.{k}", True)
             for k, v in memory_parts_shown(result)]
    cap = _field(result, "gpu_memory_GB")
    rows.append((f"{GPU_MEMORY} (GB)", figure("GB", cap),
                 "the GPU's capacity: the catalog's memory_GB as vendors quote it, in GiB, "
                 "counted in GB of 10^9 bytes like the estimate", False))
    rows.append((FITS, fits_text(result), "the estimate against the GPU's memory", False))
    return rows


def optimizer_offload_text(o: dict) -> str:
    """``Result.optimizer_offload`` in words, under the CPU optimizer step's row (``run``; the
    app's tip of that row): its three parts and whether they run one after the other or
    pipelined."""
    how = "pipelined" if o["overlapped"] else "one after the other"
    return (f"gradients to host {o['d2h_s']:.3f} s, Adam on the host {o['cpu_step_s']:.3f} s, weights back "
            f"{o['h2d_s']:.3f} s ({how}; {o['params'] / 1e6:,.0f}M parameters, host link "
            f"{o['host_link_GBps']:.3g} GB/s, host memory {o['host_memory_GBps']:.3g} GB/s per GPU)")
