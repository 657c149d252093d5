"""Run → Sweep: the design run over values of one parameter, or a grid of two, in all three
offload modes.

The parameter is any form :func:`designer.engine.sweep.apply_param` accepts (``servers``,
``workload.NAME``, ``scenario.NAME``, ``KIND.FIELD``, ``ID.FIELD``); the list offers those of the
current design with their present value, grouped under headers as ``dpu-designer sweep FILE --list``
prints them (:func:`designer.engine.sweep.sweepable`). **Then by** (optional) takes a second
parameter and its values: the grid of both (every combination, the second varying fastest, as
``dpu-designer sweep --param A --values ... --param B --values ...``) runs through the same
stream, drawn against the first parameter as one curve per offload mode and value of the second.
A :class:`~designer.gui.worker.GeneratorWorker`
drives :func:`designer.services.sweeping.stream` (the path ``dpu-designer sweep`` takes): the points
run on a process pool of all cores (started with ``spawn``, never forked from a process running Qt
threads; the design is sent once per worker), the plot grows as points finish, and Cancel stops
handing out points (those running finish in the background). A point's figures do not depend on how
the points are spread over processes, so they equal those of ``dpu-designer sweep``.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QProgressBar, QPushButton, QVBoxLayout, QWidget)

from designer.engine.sweep import Grid, SweepResult, make_grid, parse_values, sweepable
from designer.errors import UsageError
from designer.gui.messages import gui_words
from designer.gui.plots import SweepPlot
from designer.gui.worker import GeneratorWorker, RetiredWorkers, WorkerOwner

#: multiples of the present value offered as the default values of a sweep
_STEPS = (0.5, 1, 2, 4)


def default_values(present: float | None) -> str:
    """A value list around the present value (half, same, double, four times)."""
    if not present or present <= 0:
        return ""
    whole = float(present).is_integer()
    values = []
    for step in _STEPS:
        v = present * step
        v = max(1, round(v)) if whole else v
        if v not in values:
            values.append(v)
    return ",".join(f"{v:g}" for v in values)


def sweep_stream(design: Any, param: str | Grid, values: Sequence[float] | None = None, *, seed: int = 0,
                 workers: int | None = None, cancel: threading.Event | None = None) -> Iterator[tuple]:
    """Worker generator over :func:`designer.services.sweeping.stream`, the points kept in a
    :class:`~designer.engine.sweep.Summary` as ``dpu-designer sweep`` keeps them: ``("point",
    done, total, SweepResult of the points so far)`` as each point finishes (in value order), then
    ``("result", SweepResult)``. ``param`` is one parameter with its ``values``, or a
    :class:`~designer.engine.sweep.Grid`. Every point holds the three offload modes (host, SmartNIC, DPU).
    Setting ``cancel`` (or closing the generator) stops handing out points."""
    from designer.engine.sweep import Summary, as_grid
    from designer.services.sweeping import stream

    grid = as_grid(param, values)
    points = stream(design, grid, seed=seed, workers=workers, cancel=cancel)
    summary = Summary(grid)
    try:
        for index, vals, row, notes in points:
            summary.add(index, vals, row, notes)
            yield ("point", summary.count, grid.size, summary.result())
    finally:
        points.close()  # type: ignore[attr-defined]  # a closed generator (Cancel) hands out no more points
    yield ("result", summary.result())


class SweepDialog(WorkerOwner, QDialog):
    """Parameter, values, Run/Cancel with progress, then the sweep's plot and table."""

    def __init__(self, catalog: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sweeping = False  #: a started sweep that has not ended yet
        self.setWindowTitle("Sweep")
        self.catalog = catalog
        self.design: Any = None
        self.worker: GeneratorWorker | None = None
        self._retired = RetiredWorkers(self)  #: cancelled, finishing their current step
        self.result: SweepResult | None = None
        #: processes of a sweep (None: all cores)
        self.workers: int | None = None
        self._cancel = threading.Event()
        self._present: dict[str, float | None] = {}
        self.param, self.present, self.values = self._parameter_row(
            "servers, workload.NAME, scenario.NAME, KIND.FIELD (every component of a kind) or "
            "ID.FIELD (one component)", "comma-separated, e.g. 16,64,256", self._param_changed)
        #: the grid's second parameter (empty: none) and its values
        self.param2, self.present2, self.values2 = self._parameter_row(
            "optional: a second parameter; every combination of both runs, one curve per value of "
            "this one", "values of the second parameter, e.g. 1,2", self._param2_changed)
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        close = QPushButton("Close")
        self.progress = QProgressBar()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.plot = SweepPlot()
        form = QFormLayout()
        prow = QHBoxLayout()
        prow.addWidget(self.param, 1)
        prow.addWidget(self.present)
        form.addRow("Parameter", prow)
        form.addRow("Values", self.values)
        prow2 = QHBoxLayout()
        prow2.addWidget(self.param2, 1)
        prow2.addWidget(self.present2)
        form.addRow("Then by (optional)", prow2)
        form.addRow("Its values", self.values2)
        buttons = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.progress):
            buttons.addWidget(w)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.plot, 1)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        close.clicked.connect(self.close)
        self.resize(900, 700)

    def set_design(self, design: Any) -> None:
        """Sweep ``design`` from now on (a running sweep of another design stops)."""
        if design is not self.design:
            self.cancel()
        self.design = design
        groups = sweepable(design, self.catalog)
        self._present = {name: present for _, rows in groups for name, present in rows}
        keep, keep2 = self.param.currentText(), self.param2.currentText()
        headers = self._fill(self.param, groups)
        self._fill(self.param2, groups, none=True)
        first = next((name for _, rows in groups for name, _ in rows), "")
        self.param.setCurrentText(keep if keep and keep not in headers else first)
        self._param_changed(self.param.currentText())
        self.param2.setCurrentText(keep2 if keep2 and keep2 not in headers else "")
        self._param2_changed(self.param2.currentText())

    @staticmethod
    def _fill(combo: QComboBox, groups: list, none: bool = False) -> set[str]:
        """The parameters of ``groups`` under bold headers that cannot be chosen (``none``: an
        empty first entry, no second parameter); returns the headers."""
        combo.blockSignals(True)
        combo.clear()
        model = combo.model()
        headers = set()
        if none:
            combo.addItem("", "")
        for title, rows in groups:
            headers.add(title[:1].upper() + title[1:])
            combo.addItem(title[:1].upper() + title[1:])
            header = model.item(combo.count() - 1)  # a header: shown, not chosen
            header.setFlags(header.flags() & ~(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable))
            font = header.font()
            font.setBold(True)
            header.setFont(font)
            for name, _ in rows:
                combo.addItem(name, name)
        combo.blockSignals(False)
        return headers

    @staticmethod
    def _parameter_row(tip: str, hint: str, changed) -> tuple[QComboBox, QLabel, QLineEdit]:
        """A parameter's editable choice (tooltip ``tip``, ``changed`` on a new text), the label of
        its present value and the field of its values (placeholder ``hint``)."""
        box = QComboBox()
        box.setEditable(True)
        box.setMinimumContentsLength(28)
        box.setToolTip(tip)
        box.currentTextChanged.connect(changed)
        values = QLineEdit()
        values.setPlaceholderText(hint)
        return box, QLabel(), values

    def _param_changed(self, text: str) -> None:
        present = self._present.get(text.strip())
        self.present.setText(f"now {present:g}" if present is not None else "")
        if present is not None:
            self.values.setText(default_values(present))

    def _param2_changed(self, text: str) -> None:
        present = self._present.get(text.strip())
        self.present2.setText(f"now {present:g}" if present is not None else "")
        if not text.strip():
            self.values2.setText("")
        elif present is not None:
            self.values2.setText(default_values(present))

    # --- running
    def grid(self) -> Grid:
        """The sweep the fields describe: the first parameter's values, or the grid with the
        second's; a UsageError in the dialog's words for a value or parameter it cannot take."""
        param, param2 = self.param.currentText().strip(), self.param2.currentText().strip()
        if not param:
            raise UsageError("Choose a parameter to sweep")
        try:
            values = parse_values(self.values.text())
        except UsageError as exc:
            raise UsageError(str(exc).replace("--values:", "Values:")) from None
        if not param2:
            return make_grid([param], [values])
        try:
            values2 = parse_values(self.values2.text())
        except UsageError as exc:
            raise UsageError(str(exc).replace("--values:", f"Values of {param2}:")) from None
        if param2 == param:
            raise UsageError(f"Then by: {param} is already the first parameter; choose another one, or none")
        try:
            return make_grid([param, param2], [values, values2])
        except UsageError as exc:
            raise UsageError(str(exc).replace("sweep: ", "").replace("--values", "values")) from None

    def start(self) -> None:
        try:
            grid = self.grid()
        except UsageError as exc:
            self.status.setText(str(exc))
            return
        self.cancel()
        self.progress.setRange(0, grid.size)
        self.progress.setValue(0)
        self.status.setText(f"Running {grid.words()}: {grid.size:,} point(s)…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._cancel = threading.Event()
        self._sweeping = True  #: a sweep was started and has not ended (Cancel says so)
        self.worker = self._retired.start(sweep_stream, self.design.copy(), grid,
                                          seed=int(self.design.scenario.get("seed", 0)),
                                          workers=self.workers, cancel=self._cancel,
                                          on_item=self._on_item, on_finished=self._on_finished,
                                          on_aborted=self._on_aborted, on_error=self._on_error)

    def cancel(self, wait: bool = False) -> None:
        """Stop handing out the points of a running sweep (those running finish); with ``wait``, also wait for the threads
        (a point of a large design can take seconds: the window does not wait for it otherwise)."""
        worker, self.worker = self.worker, None
        self._cancel.set()  # no more points are handed out
        if worker is not None and self._sweeping:  # its thread may be between two points
            self._sweeping = False
            if not worker.is_running() or self._retired.retire(worker):
                self.status.setText("Cancelled")
            else:
                self.status.setText("Cancelled (the points running finish in the background)")
        if wait:
            self._retired.wait()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    # --- worker items (GUI thread)
    def _on_item(self, item: tuple) -> None:
        if not self._from_current():
            return
        if item[0] == "point":
            self.progress.setValue(item[1])
            self.status.setText(f"{item[1]:,} of {item[2]:,} points done")
            self.result = item[3]
            self.plot.show_result(self.result)
        else:
            self.result = item[1]
            self.plot.show_result(self.result)

    def _on_finished(self) -> None:
        if self._from_current():
            r = self.result
            assert r is not None  # the last item, "result", came before the end
            self._ended(f"Done: {r.param}, {r.total if r.total is not None else len(r.values):,} point(s)"
                        + (f" ({r.thinned})" if r.thinned else ""))

    def _on_aborted(self) -> None:
        if self._from_current():
            self.status.setText("Cancelled")

    def _on_error(self, message: str) -> None:
        if self._from_current():
            # the CLI's words for the dialog's fields: no 'sweep:' prefix, the Parameter list
            # instead of 'sweep FILE --list'
            text = message.replace("--param ", "parameter ").removeprefix("sweep: ").replace(
                "'dpu-designer sweep FILE --list' lists", "the Parameter list offers")
            self._ended(f"Error: {gui_words(text)}")

    def _ended(self, status: str) -> None:
        self._sweeping = False
        self.worker.stop()  # the generator has ended: this only joins the thread
        self.status.setText(status)
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
