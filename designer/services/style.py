"""Colours and labels the window and the report both show (hex strings and plain words; no Qt).

One name per fact: a scenario is drawn in the same colour and called by the same words in the
run view, the sweep plot and every report chart; a breakdown part keeps its colour from run to
run and from window to report.
"""

from __future__ import annotations

#: colour per scenario (Okabe-Ito palette, readable with colour blindness: Okabe and Ito,
#: "Color Universal Design", 2008)
SCENARIO_COLOR = {"host": "#E69F00", "smartnic": "#009E73", "dpu": "#0072B2"}
#: what a scenario is called in the window and the report
SCENARIO_LABEL = {"host": "host-managed", "smartnic": "SmartNIC-offloaded", "dpu": "DPU-offloaded"}
#: a scenario's short name, where a column has little room (the report's comparison, the sweep table)
SCENARIO_SHORT = {"host": "Host", "smartnic": "SmartNIC", "dpu": "DPU"}
#: colour per breakdown part (Okabe-Ito, then four of Paul Tol's muted colours): one per key of
#: ``designer.engine.result.BREAKDOWN_KEYS``, so a part keeps its colour from run to run
BREAKDOWN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#332288", "#88CCEE", "#CC79A7", "#56B4E9",
                    "#D55E00", "#F0E442", "#999999", "#882255", "#44AA99", "#117733", "#DDCC77")


# --- one precision per fact ------------------------------------------------------------------
#: how every view (``run``, ``compare``, ``sweep``, ``optimize``, ``plan``, the app's Engine
#: results and the report) prints a figure: (format of the value, unit word). One format per
#: fact, so that a figure reads the same wherever it is shown and a difference of two shown
#: figures is the difference of what the reader sees. The precisions are those a planner acts
#: on: milliseconds of a step, a tenth of a day of a months-long run, a tenth of a percent of
#: MFU or host cycles, whole tokens per second.
FIGURE_FORMAT = {
    "seconds": ("{:,.3f}", "s"),          #: iteration time, its parts, time hidden by overlap
    "days": ("{:,.1f}", "days"),          #: training time (steady state or timeline)
    "percent": ("{:.1f}", "%"),           #: MFU, goodput, shares of host cycles (given in %)
    "tflops": ("{:,.1f}", "TFLOP/s"),     #: achieved model TFLOP/s per GPU
    "tokens_per_s": ("{:,.0f}", "tokens/s"),
    "MWh": ("{:,.1f}", "MWh"),            #: energy of the run
    "kW": ("{:,.1f}", "kW"),              #: cluster power
    "GB": ("{:,.1f}", "GB"),              #: memory per GPU, its parts and the GPU's capacity (10^9 bytes)
}


def _finite(value) -> bool:
    import math

    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def figure(fact: str, value) -> str:
    """``value`` of the fact ``fact`` (a key of :data:`FIGURE_FORMAT`) at its one precision,
    without its unit; "–" when there is no finite figure."""
    if not _finite(value):
        return "–"
    text = FIGURE_FORMAT[fact][0].format(value)
    return "0" + text[2:] if text.startswith("-0") and not any(c in "123456789" for c in text) else text


def shown_value(fact: str, value) -> float | None:
    """The number the reader sees of ``value`` (``value`` rounded to the fact's precision)."""
    return float(figure(fact, value).replace(",", "")) if _finite(value) else None


def delta(fact: str, base, other, unit: str = "") -> str:
    """``other − base`` as the difference of the two figures as shown (each rounded to the fact's
    precision first), signed, at that precision, with ``unit`` (e.g. " pts"); "equal" when the
    two figures read the same; "" when either is missing. A difference below the shown precision
    is not printed at a precision the figures themselves do not have (-0.000153 beside 6.935)."""
    a, b = shown_value(fact, base), shown_value(fact, other)
    if a is None or b is None:
        return ""
    if figure(fact, base) == figure(fact, other):
        return "equal"
    text = figure(fact, b - a)
    return ("+" if b > a else "") + text + unit


def all_equal(fact: str, values) -> bool:
    """Whether every finite figure of ``values`` reads the same at the fact's precision (at least
    two of them)."""
    shown = {figure(fact, v) for v in values if _finite(v)}
    return len([v for v in values if _finite(v)]) >= 2 and len(shown) == 1


#: a breakdown part of ``designer.engine.result.BREAKDOWN_KEYS`` as a table row names it: the
#: planners' words the app's Engine results use (the CLI's and the report's tables too), short
#: enough for a column
PART_LABEL = {"compute": "Compute", "tp_comm": "TP communication", "pp_comm": "Pipeline send/receive",
              "cp_comm": "CP ring exchange", "ep_comm": "EP all-to-all",
              "dp_exposed": "Exposed DP communication", "bubble": "Pipeline bubble",
              "host_cpu_slowdown": "Host CPU over capacity", "dpu_slowdown": "Adapter over capacity",
              "data_stall": "Data stall", "straggler": "Stragglers", "checkpoint": "Checkpoints",
              "activation_offload": "Activation offload", "optimizer_offload": "CPU optimizer step"}


def part_label(key: str) -> str:
    """:data:`PART_LABEL` of a breakdown key; an unknown key as words."""
    return PART_LABEL.get(key, key.replace("_", " "))
