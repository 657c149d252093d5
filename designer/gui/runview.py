"""The run view: run the design host-managed and DPU-offloaded, watch both timelines live.

The engine and the timeline run in a :class:`~designer.gui.worker.GeneratorWorker`; the worker's
items arrive in :meth:`RunView._on_item` (a method of this GUI-thread object, so it runs in the GUI
thread). The plots redraw on their own timer. Cancel stops the generator between two batches and
waits for the thread.

``result_ready(host_result, dpu_result)`` is emitted as soon as the steady-state engine results are
known (before the timelines have run), for the canvas to colour links by utilization.
"""

from __future__ import annotations

from typing import Any, Iterator

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QProgressBar, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from designer.engine.timeline import TimelineInputs, TimelineRun, TimelineSummary, inputs_for
from designer.gui.plots import SCENARIO_LABEL, LivePlots
from designer.gui.worker import GeneratorWorker

SCENARIOS = ("host", "dpu")
_SUMMARY_ROWS = (("Training time (days)", lambda s: f"{s.training_time_days:.1f}"),
                 ("Goodput", lambda s: f"{100 * s.goodput:.1f}%"),
                 ("Mean iteration (s)", lambda s: f"{s.mean_iteration_s:.3f}"),
                 ("Failures", lambda s: f"{s.failures}"),
                 ("Checkpoints", lambda s: f"{s.checkpoints}"),
                 ("Lost work (h)", lambda s: f"{s.time_s['lost'] / 3600:.1f}"))


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
    """Run / Cancel, a progress bar, the live plots and a summary table of both scenarios."""

    result_ready = Signal(object, object)  #: (host Result, DPU Result) of the steady-state engine
    run_finished = Signal(object)  #: {scenario: TimelineSummary} when both timelines are done

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.design: Any = None
        self.catalog: Any = None
        self.worker: GeneratorWorker | None = None
        self.summaries: dict[str, TimelineSummary] = {}
        self._progress: dict[str, float] = {}
        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.status = QLabel("Ready")
        self.plots = LivePlots()
        self.table = QTableWidget(len(_SUMMARY_ROWS), len(SCENARIOS))
        self.table.setHorizontalHeaderLabels([SCENARIO_LABEL[s] for s in SCENARIOS])
        self.table.setVerticalHeaderLabels([name for name, _ in _SUMMARY_ROWS])
        self.table.setMaximumHeight(210)
        bar = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.progress):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.plots, 1)
        layout.addWidget(self.table)
        self.run_button.clicked.connect(self.run_design)
        self.cancel_button.clicked.connect(self.cancel)

    # --- starting and stopping
    def set_design(self, design: Any, catalog: Any) -> None:
        self.design, self.catalog = design, catalog

    def run_design(self) -> None:
        """Run the current design (a copy, so edits during the run do not race the engine)."""
        if self.design is None:
            self.status.setText("No design to run")
            return
        self._start(design_stream, self.design.copy(), self.catalog)

    def run_inputs(self, inputs: dict[str, TimelineInputs], **kw: Any) -> None:
        """Run timelines for given inputs (no engine; for what-if studies and tests)."""
        self._start(timeline_stream, inputs, **kw)

    def _start(self, func, *args: Any, **kw: Any) -> None:
        self.cancel()
        self.plots.clear()
        self.summaries.clear()
        self._progress.clear()
        self.table.clearContents()
        self.progress.setValue(0)
        self.status.setText("Running the engine…")
        worker = GeneratorWorker(func, *args, **kw)
        worker.yielded.connect(self._on_item)
        worker.finished.connect(self._on_finished)
        worker.aborted.connect(self._on_aborted)
        worker.errored.connect(self._on_error)
        self.worker = worker
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        worker.start()

    def cancel(self) -> None:
        """Stop a running run and wait for its thread (returns within one batch of the timeline)."""
        worker, self.worker = self.worker, None
        if worker is not None and worker.is_running():
            worker.stop()
            self.plots.stop()
            self.status.setText("Cancelled")
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def is_running(self) -> bool:
        return self.worker is not None and self.worker.is_running()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        self.cancel()
        super().closeEvent(event)

    # --- worker items (GUI thread)
    def _on_item(self, item: tuple) -> None:
        if self.sender() is not self.worker:
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
            self.status.setText("Simulating the training run…")
        elif kind == "summary":
            self.summaries[item[1]] = item[2]
            self._show_summary(item[1], item[2])
        elif kind == "results":
            self.result_ready.emit(item[1], item[2])
        elif kind == "engine":
            self.status.setText(f"Engine: {SCENARIO_LABEL[item[1]]} done")

    def _show_summary(self, scenario: str, summary: TimelineSummary) -> None:
        col = SCENARIOS.index(scenario)
        for row, (_, fmt) in enumerate(_SUMMARY_ROWS):
            self.table.setItem(row, col, QTableWidgetItem(fmt(summary)))

    def _on_finished(self) -> None:
        if self.sender() is not self.worker:
            return
        self._ended("Done")
        self.progress.setValue(1000)
        self.run_finished.emit(dict(self.summaries))

    def _on_aborted(self) -> None:
        if self.sender() is self.worker:
            self.status.setText("Cancelled")

    def _on_error(self, message: str) -> None:
        if self.sender() is self.worker:
            self._ended(f"Error: {message}")

    def _ended(self, status: str) -> None:
        self.worker.stop()  # the generator has ended: this only joins the thread
        self.plots.stop()
        self.status.setText(status)
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
