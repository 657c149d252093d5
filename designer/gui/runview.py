"""The run view: run the design host-managed and DPU-offloaded, watch both timelines live.

The engine and the timeline run in a :class:`~designer.gui.worker.GeneratorWorker`; the worker's
items arrive in :meth:`RunView._on_item` (a method of this GUI-thread object, so it runs in the GUI
thread). The plots redraw on their own timer. Cancel stops the generator between two batches and
waits for the thread.

``result_ready(host_result, dpu_result)`` is emitted as soon as the steady-state engine results are
known (before the timelines have run). The view then emits ``overlay_changed(link_util, marked)``
for the canvas (``DesignScene.show_utilization``): the link utilizations of the scenario chosen in
"Canvas colours" (None when off) and the bottleneck links and components. :meth:`RunView.show_figures`
fills ``figures_panel`` ("Run figures") for the canvas selection. :func:`make_run_view` is what the main window
docks.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QProgressBar, QPushButton, QSizePolicy, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from designer.engine.timeline import TimelineInputs, TimelineRun, TimelineSummary, inputs_for
from designer.gui.plots import SCENARIO_LABEL, LivePlots
from designer.gui.worker import GeneratorWorker, RetiredWorkers, sent_by
from designer.topology.kinds import KIND_LABEL

SCENARIOS = ("host", "dpu")
_SUMMARY_ROWS = (("Training time (days)", lambda s: f"{s.training_time_days:.1f}" if s.finished
                  else f"> {s.training_time_days:,.0f} (does not finish)"),
                 ("Goodput", lambda s: f"{100 * s.goodput:.1f}%"),
                 ("Mean iteration (s)", lambda s: f"{s.mean_iteration_s:.3f}"),
                 ("Failures", lambda s: f"{s.failures}"),
                 ("Checkpoints", lambda s: f"{s.checkpoints}"),
                 ("Lost work (h)", lambda s: f"{s.time_s['lost'] / 3600:.1f}"))
#: a cable at or above this utilization is marked as a bottleneck on the canvas
BUSY = 0.9
#: most cables listed in "Run figures" (the busiest first)
FIGURE_ROWS = 40


def bottleneck_marks(result: Any, topology: Any) -> set[str]:
    """Cables at ``BUSY`` utilization or more, and the components that the result's bottleneck
    sentences name (``"link leaf-1 → spine-2 saturates ..."``, ``"oversubscription 2:1 at leaf-1"``)."""
    marked = {l.id for l in result.links if l.utilization >= BUSY}
    for sentence in result.bottlenecks:
        words = (w.strip(",.;:()'\"") for w in sentence.split())
        marked.update(w for w in words if w in topology.components)
    return marked


def natural_key(text: str) -> tuple:
    """Sort key that orders numbers inside names by value ("dpu-2" before "dpu-10")."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def cables_of(topology: Any, ident: str) -> list[str]:
    """The cable itself, or the cables of a component and of everything inside it."""
    if ident in topology.links:
        return [ident]
    found, todo = [], [ident]
    while todo:
        cid = todo.pop()
        found += [l.id for l in topology.links_of(cid) if l.id not in found]
        todo += [c.id for c in topology.children(cid)]
    return found


def _interleave(runs: dict[str, TimelineRun]) -> Iterator[tuple]:
    """Round-robin over the scenarios' batches so both curves grow together."""
    streams = {s: run.batches() for s, run in runs.items()}
    while streams:
        for scenario in list(streams):
            batch = next(streams[scenario], None)
            if batch is None:
                del streams[scenario]
                yield ("summary", scenario, runs[scenario].summary)
            else:
                yield ("samples", scenario, batch, runs[scenario].progress)


def timeline_stream(inputs: dict[str, TimelineInputs], *, seed: int = 0,
                    target_samples: int = 20000, batch_rows: int = 512) -> Iterator[tuple]:
    """Worker generator for given timeline inputs (one per scenario)."""
    runs = {s: TimelineRun(i, seed=seed, target_samples=target_samples, batch_rows=batch_rows)
            for s, i in inputs.items()}
    for scenario, inp in inputs.items():
        yield ("start", scenario, inp.token_budget, dict(inp.breakdown_s))
    yield from _interleave(runs)


def design_stream(design: Any, catalog: Any, *, seed: int = 0, **kw: Any) -> Iterator[tuple]:
    """Worker generator: the engine for both scenarios, then their timelines."""
    results, inputs = {}, {}
    for scenario in SCENARIOS:
        results[scenario], inputs[scenario] = inputs_for(design, catalog, scenario, seed=seed)
        yield ("engine", scenario)
    yield ("results", results["host"], results["dpu"])
    yield from timeline_stream(inputs, seed=seed, **kw)


class RunView(QWidget):
    """Run / Cancel, a progress bar, the live plots, a summary table of both scenarios, the canvas
    colouring choice and the run's figures of the canvas selection."""

    result_ready = Signal(object, object)  #: (host Result, DPU Result) of the steady-state engine
    run_finished = Signal(object)  #: {scenario: TimelineSummary} when both timelines are done
    #: (link id -> utilization 0..1, or None to clear; ids of bottleneck links and components)
    overlay_changed = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.design: Any = None
        self.catalog: Any = None
        self.worker: GeneratorWorker | None = None
        self._retired = RetiredWorkers(self)  #: cancelled, finishing their current step
        self.summaries: dict[str, TimelineSummary] = {}
        self.results: dict[str, Any] = {}  #: steady-state engine Result per scenario
        self._progress: dict[str, float] = {}
        self._figure_ids: list[str] = []
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the engine and the training timeline, host-managed and "
                                   "DPU-offloaded (F5)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.progress.setMaximumWidth(220)
        self.status = QLabel()
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # the dock can narrow
        self.overlay = QComboBox()
        for scenario in SCENARIOS:
            self.overlay.addItem(SCENARIO_LABEL[scenario], scenario)
        self.overlay.addItem("off", None)
        self.overlay.setToolTip("Colour the canvas cables by their utilization in this scenario; "
                                "bottlenecks are marked")
        self.overlay.currentIndexChanged.connect(self._emit_overlay)
        self.plots = LivePlots()
        self.plots.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Ignored)  # the dock can be low
        self.table = QTableWidget(len(SCENARIOS), len(_SUMMARY_ROWS))
        self.table.setVerticalHeaderLabels([SCENARIO_LABEL[s] for s in SCENARIOS])
        self.table.setHorizontalHeaderLabels([name for name, _ in _SUMMARY_ROWS])
        self.figures_title = QLabel()
        self.figures_title.setWordWrap(True)
        self.figures = QTableWidget(0, 1 + len(SCENARIOS))
        self.figures.setHorizontalHeaderLabels(["Cable"] + [SCENARIO_LABEL[s] for s in SCENARIOS])
        self.figures.verticalHeader().hide()
        for table in (self.table, self.figures):
            table.setEditTriggers(QAbstractItemView.NoEditTriggers)
            table.setWordWrap(False)
            table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
            header = table.horizontalHeader()
            header.setSectionResizeMode(QHeaderView.Stretch)
        self.figures.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        for col in range(1, 1 + len(SCENARIOS)):
            self.figures.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height()
                                  + len(SCENARIOS) * self.table.verticalHeader().defaultSectionSize()
                                  + 2 * self.table.frameWidth())
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        #: "Run figures" of the canvas selection; the main window docks it beside the inspector
        self.figures_panel = QWidget()
        flay = QVBoxLayout(self.figures_panel)
        flay.setContentsMargins(6, 6, 6, 6)
        flay.addWidget(self.figures_title)
        flay.addWidget(self.figures, 1)
        bar = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.progress):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)
        bar.addWidget(QLabel("Canvas colours:"))
        bar.addWidget(self.overlay)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.table)
        layout.addWidget(self.plots, 1)
        self.set_status("Ready: press Run (F5) to run the design")
        self.show_figures([], None)
        self.run_button.clicked.connect(self.run_design)
        self.cancel_button.clicked.connect(self.cancel)

    def set_status(self, text: str) -> None:
        """The status line (its tooltip too: a narrow dock cuts the line)."""
        self.status.setText(text)
        self.status.setToolTip(text)

    # --- starting and stopping
    def set_design(self, design: Any, catalog: Any) -> None:
        """Run ``design`` from now on; another document stops a running run and drops its results."""
        if design is not self.design:
            self.cancel()
            self.clear_results()
        self.design, self.catalog = design, catalog

    def run_design(self) -> None:
        """Run the current design (a copy, so edits during the run do not race the engine)."""
        if self.design is None:
            self.set_status("No design to run")
            return
        self._start(design_stream, self.design.copy(), self.catalog,
                    seed=int(self.design.scenario.get("seed", 0)))

    def run_inputs(self, inputs: dict[str, TimelineInputs], **kw: Any) -> None:
        """Run timelines for given inputs (no engine; for what-if studies and tests)."""
        self._start(timeline_stream, inputs, **kw)

    def _start(self, func, *args: Any, **kw: Any) -> None:
        self.cancel()
        self.clear_results()
        self.plots.clear()
        self.summaries.clear()
        self._progress.clear()
        self.table.clearContents()
        self.progress.setValue(0)
        self.set_status("Running the engine…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.worker = self._retired.start(func, *args, on_item=self._on_item,
                                          on_finished=self._on_finished,
                                          on_aborted=self._on_aborted, on_error=self._on_error, **kw)

    def cancel(self, wait: bool = False) -> None:
        """Stop a running run. The timeline stops within one batch; an engine run in progress
        cannot be interrupted, so its worker is kept (``_retired``) until it ends, and with
        ``wait`` it is waited for (the window does that when it closes)."""
        worker, self.worker = self.worker, None
        if worker is not None and worker.is_running():
            self._retired.retire(worker)
            self.plots.stop()
            self.set_status("Cancelled")
        if wait:
            self._retired.wait()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def busy(self) -> bool:
        """A run or a cancelled run's last step is still going."""
        return self.is_running() or self._retired.pending()

    def is_running(self) -> bool:
        return self.worker is not None and self.worker.is_running()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        self.cancel(wait=True)
        super().closeEvent(event)

    # --- worker items (GUI thread)
    def _from_current(self) -> bool:
        return sent_by(self, self.worker)

    def _on_item(self, item: tuple) -> None:
        if not self._from_current():
            return  # a cancelled run's last items
        kind = item[0]
        if kind == "samples":
            _, scenario, batch, fraction = item
            self.plots.append(scenario, batch)
            self._progress[scenario] = fraction
            self.progress.setValue(int(1000 * sum(self._progress.values()) / len(SCENARIOS)))
        elif kind == "start":
            _, scenario, budget, breakdown = item
            self.plots.start(scenario, budget, breakdown)
            self.set_status("Simulating the training run…")
        elif kind == "summary":
            self.summaries[item[1]] = item[2]
            self._show_summary(item[1], item[2])
        elif kind == "results":
            self.results = {"host": item[1], "dpu": item[2]}
            self.result_ready.emit(item[1], item[2])
            self._emit_overlay()
            self._refresh_figures()
        elif kind == "engine":
            self.set_status(f"Engine: {SCENARIO_LABEL[item[1]]} done")

    def _show_summary(self, scenario: str, summary: TimelineSummary) -> None:
        row = SCENARIOS.index(scenario)
        for col, (_, fmt) in enumerate(_SUMMARY_ROWS):
            cell = QTableWidgetItem(fmt(summary))
            cell.setTextAlignment(Qt.AlignCenter)
            cell.setToolTip(summary.unfinished_text())
            self.table.setItem(row, col, cell)

    def _on_finished(self) -> None:
        if not self._from_current():
            return
        stopped = [f"{SCENARIO_LABEL[k]}: {v.unfinished_text()}" for k, v in self.summaries.items()
                   if not v.finished]
        self._ended("Done. " + " ".join(stopped) if stopped else "Done")
        self.progress.setValue(1000)
        self.run_finished.emit(dict(self.summaries))

    def _on_aborted(self) -> None:
        if self._from_current():
            self.set_status("Cancelled")

    def _on_error(self, message: str) -> None:
        if self._from_current():
            self._ended(f"Error: {message}")

    def _ended(self, status: str) -> None:
        self.worker.stop()  # the generator has ended: this only joins the thread
        self.plots.stop()
        self.set_status(status)
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    # --- results on the canvas
    def clear_results(self) -> None:
        """Forget the engine results (the canvas colours go, the figures empty)."""
        self.results = {}
        self._emit_overlay()
        self._refresh_figures()

    def overlay_scenario(self) -> str | None:
        return self.overlay.currentData()

    def set_overlay(self, scenario: str | None) -> None:
        """Colour the canvas by ``"host"`` or ``"dpu"`` utilizations, or not at all (None)."""
        self.overlay.setCurrentIndex(self.overlay.findData(scenario))

    def _emit_overlay(self, *_args: Any) -> None:
        result = self.results.get(self.overlay_scenario())
        if result is None or self.design is None:
            self.overlay_changed.emit(None, set())
            return
        util = {l.id: float(l.utilization) for l in result.links}
        self.overlay_changed.emit(util, bottleneck_marks(result, self.design.topology))

    def show_figures(self, ids: Iterable[str], topology: Any) -> None:
        """Fill "Run figures" with the run's utilization and phase of the cables of ``ids``
        (a cable, or a component's cables and its NICs'/DPUs' cables)."""
        self._figure_ids = list(ids)
        self._refresh_figures(topology)

    def _refresh_figures(self, topology: Any = None) -> None:
        topology = topology or (self.design.topology if self.design is not None else None)
        ids = [i for i in self._figure_ids
               if topology is not None and (i in topology.components or i in topology.links)]
        self.figures.setRowCount(0)
        if not self.results:
            self.figures_title.setText("Run the design, then select a cable or a switch to see its "
                                       "utilization here.")
            return
        if not ids:
            self.figures_title.setText("Select a cable or a switch to see its utilization.")
            return
        by_id = {s: {l.id: l for l in r.links} for s, r in self.results.items()}
        cables = [c for i in ids for c in cables_of(topology, i)]
        cables = sorted(dict.fromkeys(cables), key=lambda c: (-max(
            (by_id[s][c].utilization for s in by_id if c in by_id[s]), default=-1.0),
            natural_key(f"{topology.links[c].a} {topology.links[c].b}")))
        self.figures_title.setText(self._figures_heading(ids, topology, cables, by_id))
        shown = cables[:FIGURE_ROWS]
        self.figures.setRowCount(len(shown))
        for row, cid in enumerate(shown):
            link = topology.links[cid]
            name = QTableWidgetItem(f"{link.a} – {link.b}")
            name.setToolTip(f"{cid}: {link.medium}, {link.lanes}× {link.speed_Gbps:g} Gb/s")
            self.figures.setItem(row, 0, name)
            for col, s in enumerate(SCENARIOS, 1):
                found = by_id.get(s, {}).get(cid)
                text = f"{100 * found.utilization:.0f}% ({found.phase})" if found else "not in the run"
                cell = QTableWidgetItem(text)
                cell.setTextAlignment(Qt.AlignCenter)
                self.figures.setItem(row, col, cell)

    @staticmethod
    def _figures_heading(ids: list[str], topology: Any, cables: list[str], by_id: dict) -> str:
        if len(ids) == 1 and ids[0] in topology.links:
            what = f"Cable {ids[0]}"
        elif len(ids) == 1:
            comp = topology.components[ids[0]]
            what = f"{KIND_LABEL[comp.kind]} {comp.label}"
        else:
            what = f"{len(ids)} selected"
        if not cables:
            return f"{what}: no cables"
        busiest = [f"{SCENARIO_LABEL[s]} {100 * max((m[c].utilization for c in cables if c in m), default=0):.0f}%"
                   for s, m in by_id.items()]
        more = f", the busiest {FIGURE_ROWS} listed" if len(cables) > FIGURE_ROWS else ""
        return f"<b>{what}</b>: {len(cables)} cable(s){more}; busiest: {', '.join(busiest)}"


def make_run_view(window: Any) -> RunView:
    """The run view the main window docks, running the window's design with its catalog."""
    view = RunView()
    view.set_design(window.design, window.catalog)
    return view
