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
#: colour per breakdown part (Okabe-Ito, then two of Paul Tol's muted colours): one per key of
#: ``designer.engine.result.BREAKDOWN_KEYS``, so a part keeps its colour from run to run
BREAKDOWN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#332288", "#88CCEE", "#CC79A7", "#56B4E9",
                    "#D55E00", "#F0E442", "#999999", "#882255", "#44AA99")

