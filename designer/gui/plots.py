"""Live plots of timeline runs, host-managed and DPU-offloaded overlaid on the same axes.

The plotting pattern is pyqtgraph's streaming one: the curves exist from the start; samples are
appended to numpy buffers as they arrive; one QTimer (25 Hz) calls ``setData`` on the curves whose
data changed. Rates and utilizations are drawn as time-weighted means in :data:`BINS` time bins;
every plot also downsamples automatically and clips to the view, so the 20,000+ point progress
curves stay cheap.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from designer.engine.result import BREAKDOWN_KEYS, BREAKDOWN_LABEL
from designer.engine.timeline import COLUMNS, TRAINING, Samples
from designer.services.style import BREAKDOWN_COLORS, SCENARIO_COLOR, SCENARIO_LABEL, figure

REFRESH_HZ = 25
#: time bins of the utilization and throughput curves
BINS = 2000
_DAY = 86400.0


class _Buffer:
    """Growing sample store for one scenario (capacity doubles; appends are amortized O(1))."""

    def __init__(self) -> None:
        self.data = np.empty((1024, len(COLUMNS)))
        self.n = 0

    def append(self, samples: Samples) -> None:
        m = len(samples)
        if self.n + m > len(self.data):
            grown = np.empty((max(2 * len(self.data), self.n + m), len(COLUMNS)))
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        self.data[self.n: self.n + m] = samples.data
        self.n += m

    def column(self, name: str) -> np.ndarray:
        return self.data[: self.n, COLUMNS.index(name)]

    def binned(self, names: tuple[str, ...], bins: int = BINS,
               training_only: bool = False) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Time-weighted means in equal time bins: x (bin centres, days) and one array per name.

        Samples last from a few seconds (a checkpoint) to minutes (a block of iterations); a plain
        mean over samples would give a short checkpoint the weight of a long block. Each sample
        goes to the bin of its midpoint with weight ``dt_s``; empty bins are left out.
        """
        dt = self.column("dt_s")
        mid = self.column("t_s") - dt / 2
        keep = self.column("state") == TRAINING if training_only else np.ones(self.n, bool)
        span = max(float(self.column("t_s")[-1]) if self.n else 0.0, 1e-9)
        idx = np.minimum((mid / span * bins).astype(int), bins - 1)[keep]
        w = np.bincount(idx, dt[keep], bins)
        full = w > 0
        x = ((np.arange(bins) + 0.5) * span / bins / _DAY)[full]
        means = {n: (np.bincount(idx, (self.column(n) * dt)[keep], bins)[full] / w[full])
                 for n in names}
        return x, means


#: the host CPU plot's title until a run names the adapter engine its dashed line is
CPU_TITLE = "Host CPU ── vs busiest adapter engine ╌╌ load"
#: the live plots: key, title, unit of the y axis, (row, column, rows, columns) in the layout; the
#: breakdown takes the last column with its legend under it (the dock is wide and low)
_SPECS = (("gpu", "GPU utilization", "%", (0, 0, 1, 1)),
          ("iter", "Iteration time", "s", (0, 1, 1, 1)),
          ("cpu", CPU_TITLE, "%", (0, 2, 1, 1)),
          ("io", "Network ── and storage ╌╌", "GB/s", (1, 0, 1, 1)),
          ("progress", "Training progress", "% of tokens", (1, 1, 1, 2)),
          ("breakdown", "Iteration breakdown", "s", (0, 3, 2, 1)))
#: smallest height of a row of plots (px): below it a plot's title, axes and tick labels leave
#: no room for the curve (the run view scrolls instead of squeezing them). 184 px leaves 100 px of
#: curve under the title and the time axis (160 px left 83, measured offscreen by
#: tests/test_gui_large.py), and the run dock still shows both rows whole at the default window
#: size (RunView.wanted_height, MainWindow.RUN_DOCK_MAX)
MIN_ROW_PX = 184
#: the one legend of the scenario colours (the plots are too small for a legend each)
SCENARIO_KEY = " &nbsp; ".join(
    f"<span style='color:{SCENARIO_COLOR[s]}'>━━ {SCENARIO_LABEL[s]}</span>" for s in ("host", "dpu"))


def _part_color(part: str) -> str:
    i = BREAKDOWN_KEYS.index(part) if part in BREAKDOWN_KEYS else len(BREAKDOWN_KEYS)
    return BREAKDOWN_COLORS[i % len(BREAKDOWN_COLORS)]


class LivePlots(QWidget):
    """Six plots: GPU utilization, iteration time, host CPU vs DPU, network and storage throughput,
    training progress with ETA, and the stacked iteration breakdown (with its own legend beside
    it); one colour key of the scenarios above them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=False, background="w", foreground="#333")
        self.view = pg.GraphicsLayoutWidget()
        key = QLabel(SCENARIO_KEY)
        key.setAlignment(Qt.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(key)
        layout.addWidget(self.view)
        rows = max(r + n for _, _, _, (r, _, n, _) in _SPECS)
        self.view.setMinimumHeight(rows * MIN_ROW_PX)
        self.plots: dict[str, pg.PlotItem] = {}
        #: what File → Export → Plot writes per plot: (title, graphics item)
        self.export_items: list[tuple[str, pg.GraphicsObject]] = []
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._buffers: dict[str, _Buffer] = {}
        self._budget: dict[str, float] = {}
        self._dirty: set[str] = set()
        self._bars: list[pg.BarGraphItem] = []
        self.breakdown: dict[str, dict[str, float]] = {}
        for key, title, unit, (row, col, rows, cols) in _SPECS:
            if key == "breakdown":
                cell = self.view.addLayout(row=row, col=col, rowspan=rows, colspan=cols)
                plot = cell.addPlot(row=0, col=0, title=title)
                self.legend = pg.LegendItem(labelTextSize="8pt", verSpacing=-6)
                cell.addItem(self.legend, row=1, col=0)
            else:
                cell = plot = self.view.addPlot(row=row, col=col, rowspan=rows, colspan=cols,
                                                title=title)
            self.export_items.append((title, cell))
            plot.setLabel("left", unit)
            plot.showGrid(x=True, y=True, alpha=0.2)
            if key != "breakdown":
                plot.setLabel("bottom", "simulated time", units="days")
                plot.setDownsampling(auto=True, mode="mean")
                plot.setClipToView(True)
            self.plots[key] = plot
        axis = self.plots["breakdown"].getAxis("bottom")
        axis.setTicks([[(0, "host"), (1, "DPU")]])
        self.plots["breakdown"].setXRange(-0.6, 1.6)
        for scenario in ("host", "dpu"):
            self._add_curves(scenario)
        self.timer = QTimer(self)
        self.timer.setInterval(1000 // REFRESH_HZ)
        self.timer.timeout.connect(self.refresh)

    def _add_curves(self, scenario: str) -> None:
        color, label = SCENARIO_COLOR[scenario], SCENARIO_LABEL[scenario]

        def curve(plot: str, name: str, style=None, suffix: str = "") -> None:
            pen = pg.mkPen(color, width=1.5, style=style) if style else pg.mkPen(color, width=1.5)
            self.curves[(scenario, name)] = self.plots[plot].plot(
                [], [], pen=pen, name=f"{label}{suffix}", connect="finite")

        curve("gpu", "gpu_util")
        curve("iter", "iteration_s")
        curve("cpu", "host_cpu_util", suffix=": host CPU")
        curve("cpu", "dpu_util", Qt.PenStyle.DashLine, ": busiest adapter engine")
        curve("io", "network_GBps", suffix=": network")
        curve("io", "storage_GBps", Qt.PenStyle.DashLine, ": storage")
        curve("progress", "tokens")

    def name_engines(self, busiest: dict[str, str]) -> None:
        """Say in the host CPU plot's title which adapter engine its dashed line is: ``busiest``
        maps a scenario to the key of its busiest engine (``Result.dpu``; the timeline's
        ``dpu_util`` column is that engine's load, ``designer.engine.timeline``)."""
        from designer.report.names import engine_word

        names = list(dict.fromkeys(engine_word(k) for k in busiest.values() if k))
        self.plots["cpu"].setTitle(CPU_TITLE if not names else
                                   f"Host CPU ── vs {' / '.join(names)} ╌╌ load")

    # --- feeding
    def clear(self) -> None:
        self._buffers.clear()
        self._budget.clear()
        self.breakdown.clear()
        for c in self.curves.values():
            c.setData([], [])
        self._draw_breakdown()
        self.plots["progress"].setTitle("Training progress")
        self.plots["cpu"].setTitle(CPU_TITLE)

    def start(self, scenario: str, token_budget: float, breakdown_s: dict[str, float]) -> None:
        """A scenario's run begins: its token budget (for progress) and its iteration breakdown."""
        self._buffers[scenario] = _Buffer()
        self._budget[scenario] = token_budget
        self.breakdown[scenario] = dict(breakdown_s)
        self._draw_breakdown()
        self.timer.start()

    def append(self, scenario: str, samples: Samples) -> None:
        self._buffers[scenario].append(samples)
        self._dirty.add(scenario)

    def points(self, scenario: str) -> int:
        buf = self._buffers.get(scenario)
        return buf.n if buf else 0

    def stop(self) -> None:
        """No more data is coming: draw what is left and stop the timer."""
        self.refresh()
        self.timer.stop()

    # --- drawing (the timer's slot)
    def refresh(self) -> None:
        for scenario in sorted(self._dirty):
            buf = self._buffers[scenario]
            x, means = buf.binned(("gpu_util", "host_cpu_util", "dpu_util", "network_GBps",
                                   "storage_read_GBps", "storage_write_GBps"))
            for name in ("gpu_util", "host_cpu_util", "dpu_util"):
                self.curves[(scenario, name)].setData(x, 100 * means[name])
            self.curves[(scenario, "network_GBps")].setData(x, means["network_GBps"])
            self.curves[(scenario, "storage_GBps")].setData(
                x, means["storage_read_GBps"] + means["storage_write_GBps"])
            xi, it = buf.binned(("iteration_s",), training_only=True)
            self.curves[(scenario, "iteration_s")].setData(xi, it["iteration_s"])
            self.curves[(scenario, "tokens")].setData(
                buf.column("t_s") / _DAY, 100 * buf.column("tokens") / self._budget[scenario])
        if self._dirty:
            self.plots["progress"].setTitle(self._eta_title())
        self._dirty.clear()

    def _eta_title(self) -> str:
        """"Training progress: ends ~day D" per scenario, in the scenario's colour (short: the
        plot is a third of the run view wide)."""
        parts = []
        for scenario, buf in self._buffers.items():
            if not buf.n:
                continue
            t = buf.data[buf.n - 1, COLUMNS.index("t_s")]
            frac = buf.data[buf.n - 1, COLUMNS.index("tokens")] / self._budget[scenario]
            eta = f"~day {t / frac / _DAY:.0f}" if frac > 0 else "-"
            parts.append(f"<span style='color:{SCENARIO_COLOR[scenario]}'>{eta}</span>")
        return "Training progress, ends " + " / ".join(parts)

    def _draw_breakdown(self) -> None:
        plot = self.plots["breakdown"]
        for bar in self._bars:
            plot.removeItem(bar)
        self._bars.clear()
        self.legend.clear()
        parts: list[str] = []
        for b in self.breakdown.values():
            parts += [k for k in b if k not in parts]
        bottoms = np.zeros(2)
        for part in parts:
            heights = np.array([max(self.breakdown.get(s, {}).get(part, 0.0), 0.0)
                                for s in ("host", "dpu")])
            if not heights.any():
                continue
            bar = pg.BarGraphItem(x=np.arange(2), height=heights, y0=bottoms.copy(), width=0.6,
                                  brush=_part_color(part),
                                  name=BREAKDOWN_LABEL.get(part, part))
            plot.addItem(bar)
            self.legend.addItem(bar, BREAKDOWN_LABEL.get(part, part))
            self._bars.append(bar)
            bottoms += heights
        top = float(bottoms.max()) if len(parts) else 1.0
        plot.setYRange(0, top * 1.05 if top > 0 and math.isfinite(top) else 1.0)


#: line style, symbol and symbol size per mode in the sweep plot: SmartNIC and DPU runs often give
#: the same figure, and the later line would hide the earlier one
#: a colour per value of a grid's second parameter (matplotlib's "tab10" order, told apart by
#: most colour-blind readers in its first few)
_GRID_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                "#17becf", "#d62728")
_SWEEP_STYLE = {"host": (Qt.PenStyle.SolidLine, "o", 7), "smartnic": (Qt.PenStyle.SolidLine, "s", 11),
                "dpu": (Qt.PenStyle.DashLine, "t", 8)}


class SweepPlot(QWidget):
    """A sweep's steady-state training time and MFU against the swept value, one line per offload
    mode, as a plot and a table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=False, background="w", foreground="#333")
        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.table = QTableWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 3)
        layout.addWidget(self.table, 2)
        self.days = self.view.addPlot(row=0, col=0, title="Training time, steady state")
        self.mfu = self.view.addPlot(row=0, col=1, title="MFU")
        self.days.setLabel("left", "days")
        self.mfu.setLabel("left", "%")
        for plot in (self.days, self.mfu):
            plot.showGrid(x=True, y=True, alpha=0.2)
        #: one key under both plots, a column per offload mode: inside a plot its rows (six for a
        #: grid of two values) covered the curves
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=3, frame=False)
        self.view.addItem(self.legend, row=1, col=0, colspan=2)

    def show_result(self, result) -> None:
        """Plot and tabulate every offload mode the result holds (all three from the sweep
        dialog; a two-mode ``dpu-designer sweep`` result shows its two). A grid of two parameters
        is drawn against the first, one curve per offload mode and value of the second (a colour
        per value, the mode's dash and symbol); the table has a column per parameter."""
        from designer.engine.compare import MODES

        SCENARIOS = [m for m in MODES if result.rows and m in result.rows[0]]
        two = len(result.params) == 2
        # (label suffix, colour or None for the mode's own, indices of its kept points in order)
        curves: list[tuple[str, Any, list[int]]] = [("", None, list(range(len(result.values))))]
        if two:
            seconds = list(dict.fromkeys(v[1] for v in result.values))
            curves = [(f", {result.params[1]} = {b:g}", _GRID_COLORS[i % len(_GRID_COLORS)],
                       [j for j, v in enumerate(result.values) if v[1] == b]) for i, b in enumerate(seconds)]
        x_all = np.asarray(result.axis(0), dtype=float)
        self.legend.clear()
        self.legend.setColumnCount(len(SCENARIOS) or 1)
        for plot, metric, scale in ((self.days, "training_time_days", 1), (self.mfu, "mfu", 100)):
            plot.clear()
            plot.setLabel("bottom", result.params[0] if two else result.param)
            for suffix, colour, idx in curves:
                for s in SCENARIOS:  # equal figures of two modes must both show: own dash and symbol
                    dash, symbol, size = _SWEEP_STYLE.get(s, (Qt.PenStyle.SolidLine, "o", 6))
                    c = colour if colour is not None else SCENARIO_COLOR[s]
                    y = np.asarray(result.series(s, metric), dtype=float)[idx]
                    item = plot.plot(x_all[idx], scale * y, name=SCENARIO_LABEL[s] + suffix,
                                     pen=pg.mkPen(c, width=2, style=dash), symbol=symbol,
                                     symbolBrush=c, symbolPen=c, symbolSize=size)
                    if plot is self.days:  # the key names each curve once, for both plots
                        self.legend.addItem(item, SCENARIO_LABEL[s] + suffix)
        heads = list(result.params) + [f"{SCENARIO_LABEL[s]} {m}" for s in SCENARIOS
                                       for m in ("days", "MFU %")]
        self.table.setColumnCount(len(heads))
        self.table.setHorizontalHeaderLabels(heads)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.setRowCount(len(result.values))
        for r, (values, row) in enumerate(zip(result.values, result.rows)):
            cells = [f"{v:g}" for v in values] + [c for s in SCENARIOS for c in (
                figure("days", row[s]["training_time_days"]), figure("percent", 100 * row[s]["mfu"]))]
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
