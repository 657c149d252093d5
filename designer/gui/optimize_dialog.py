"""Run → Optimize…: the design search of :mod:`designer.services.optimize` in a dialog.

The target (workload, GPUs, days, budget) and the search space (server models, adapters, switches,
oversubscription) are set above; the search (:func:`designer.services.optimize.optimize_steps`,
the same as ``dpu-designer optimize``) runs in a :class:`~designer.gui.worker.GeneratorWorker`
whose points go to a local process pool. Finished points land on the plot (training time
against CapEx; grey: misses the target, blue: meets it, red: on the Pareto front; redrawn at most
every :data:`REDRAW_S`); the front fills the table. The dialog keeps what ``optimize --report``
keeps, :class:`designer.services.optimize.Chart`: the front and every design up to
``PLOTTED`` (20,000), an even sample beyond (the plot's title says which), never every row.
**Write every design to** a ``.csv`` or ``.parquet`` file (Browse… opens a file dialog) streams each
row as it finishes through the path ``optimize --out`` takes
(:func:`designer.services.optimize.steps_to_file`); Cancel keeps the rows finished under that name
and says how many. **Open design** opens the selected front design in the window (asking to save the
current one first), as File → New from template does.

Entry point: :func:`open_optimize_dialog` (one dialog per main window, reused).
"""

from __future__ import annotations

import os
import time
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDialog, QDoubleSpinBox,
                               QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from designer.gui.worker import GeneratorWorker, RetiredWorkers, SearchDialog, sent_by

COLUMNS = ("#", "Server", "Adapters", "Switch", "Oversub.", "CapEx (USD)", "TCO (USD)", "Days", "Energy (MWh)",
           "Tokens per USD", "MFU")


from designer.services.optimize import ADAPTER_WORDS

#: the row file's field as a message names it
OUT_WHAT = "Write every design to"
#: the CLI's option names in the shared checks' messages (``services.optimize.check``) as this
#: dialog's field labels
FIELD_WORDS = {"--server-models": "Server models:", "--switches": "Switches:", "--adapters": "Adapters:",
               "--oversubscription": "Oversubscription:", "--gpus": "GPUs:"}
#: the plot is redrawn at most this often while a search runs (seconds; once more at its end)
REDRAW_S = 0.25


def front_cells(row: dict[str, Any], rank: int) -> list[str]:
    return [str(rank), row["server"], ADAPTER_WORDS.get(row["adapters"], row["adapters"]), row["switch"], f"{row['oversubscription']:g}:1",
            f"{row['capex_USD'] / 1e6:,.2f} M", f"{row['tco_USD'] / 1e6:,.2f} M", f"{row['training_time_days']:.2f}",
            f"{row['energy_MWh']:,.1f}", f"{row['tokens_per_USD']:,.0f}", f"{100 * row['mfu']:.1f}%"]


class OptimizeDialog(SearchDialog, QDialog):
    """Target and search space, Search/Cancel with progress, the points plot, the front, Open."""

    busy_note = "Cancelled (the points running finish in the background)"

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        import pyqtgraph as pg

        self.setWindowTitle("Optimize: the best design for a target")
        self.window_ = window
        cat = window.catalog
        self.worker: GeneratorWorker | None = None
        self._retired = RetiredWorkers(self)
        self.outcome = None
        from designer.services.optimize import Chart

        self.chart = Chart()  #: the front and the bounded sample of the designs run (module docstring)
        self._drawn = 0.0
        #: the row file of the current search: (path, what is written, total designs), else None
        self._file: tuple[str, Any, int] | None = None
        self.workload = QComboBox()
        for w in cat.workloads():
            if w.get("kind", "transformer") == "transformer" or w.get("global_batch"):
                self.workload.addItem(f"{w.get('name', w['id'])}", w["id"])
        i = self.workload.findData("gpt3-175b")
        self.workload.setCurrentIndex(max(i, 0))
        self.gpus = QSpinBox()
        self.gpus.setRange(8, 262144)
        self.gpus.setSingleStep(8)
        self.gpus.setValue(1024)
        self.days = QDoubleSpinBox()
        self.days.setRange(0, 100000)
        self.days.setDecimals(1)
        self.days.setSpecialValueText("no deadline")
        self.days.setSuffix(" days")
        self.budget = QDoubleSpinBox()
        self.budget.setRange(0, 1e6)
        self.budget.setDecimals(1)
        self.budget.setSpecialValueText("no budget")
        self.budget.setSuffix(" M USD")
        self.servers = QLineEdit("dgx-h100, hgx-b200")
        self.servers.setToolTip("server models, comma-separated: " + ", ".join(cat.ids("server")))
        self.switches = QLineEdit("qm9700, sn5600")
        self.switches.setToolTip("switch models, comma-separated: " + ", ".join(cat.ids("switch")))
        self.oversub = QLineEdit("1, 2")
        self.oversub.setToolTip("leaf oversubscription ratios (1 = non-blocking)")
        self.adapters = {a: QCheckBox(label) for a, label in ADAPTER_WORDS.items()}
        for box in self.adapters.values():
            box.setChecked(True)
        self.workers = QSpinBox()
        self.workers.setRange(1, 256)
        self.workers.setValue(os.cpu_count() or 1)
        self.workers.setToolTip("local worker processes (1: in the search thread)")
        form = QFormLayout()
        form.addRow("Workload", self.workload)
        form.addRow("GPUs", self.gpus)
        form.addRow("Finish within", self.days)
        form.addRow("CapEx at most", self.budget)
        form.addRow("Server models", self.servers)
        box = QHBoxLayout()
        for b in self.adapters.values():
            box.addWidget(b)
        box.addStretch(1)
        form.addRow("Adapters", box)
        form.addRow("Switches", self.switches)
        form.addRow("Oversubscription", self.oversub)
        form.addRow("Workers", self.workers)
        self.out = QLineEdit()
        self.out.setPlaceholderText("not written (only the front and a sample are kept)")
        self.out.setToolTip("a .csv or .parquet file: every design's row, in search order, as it finishes "
                            "(what dpu-designer optimize --out writes)")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self.choose_out)
        orow = QHBoxLayout()
        orow.addWidget(self.out, 1)
        orow.addWidget(self.browse)
        form.addRow(OUT_WHAT, orow)
        self.search_button = QPushButton("Search")
        self.search_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.open_button = QPushButton("Open design")
        self.open_button.setEnabled(False)
        self.open_button.setToolTip("open the selected design of the front in this window")
        close = QPushButton("Close")
        self.progress = QProgressBar()
        self.status = QLabel("Set a target and search the designs that meet it")
        self.status.setWordWrap(True)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "training time (days, steady state)")
        self.plot.setLabel("left", "CapEx (M USD)")
        self.plot.addLegend(offset=(-10, 10))
        self.scatter = {k: self.plot.plot([], [], pen=None, symbol="o", symbolSize=s, symbolBrush=c, name=n)
                        for k, c, s, n in (("miss", (170, 170, 170), 7, "misses the target"),
                                           ("meet", (60, 110, 200), 8, "meets it"),
                                           ("front", (210, 50, 40), 11, "Pareto front"))}
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self.open_selected())
        top = QHBoxLayout()
        top.addLayout(form, 0)
        top.addWidget(self.plot, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.search_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.open_button)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(top, 3)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 2)
        layout.addLayout(bottom)
        self.search_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.open_button.clicked.connect(self.open_selected)
        close.clicked.connect(self.close)
        window.installEventFilter(self)
        self.resize(1100, 720)

    # --- running
    def target(self):
        """The search the fields describe; a UsageError in the dialog's words for a field it cannot
        take (the CLI's checks, ``services.optimize.check``, with the fields' labels)."""
        from designer.errors import UsageError
        from designer.services.optimize import Target

        def items(edit: QLineEdit) -> tuple[str, ...]:
            return tuple(x.strip() for x in edit.text().split(",") if x.strip())

        try:
            over = tuple(float(x) for x in items(self.oversub))
        except ValueError:
            raise UsageError(f"Oversubscription: '{self.oversub.text().strip()}': write numbers like 1, 2 "
                             "(1 = non-blocking)") from None
        return Target(str(self.workload.currentData()), self.gpus.value(), self.days.value() or None,
                      self.budget.value() * 1e6 or None, None, items(self.servers),
                      tuple(a for a, b in self.adapters.items() if b.isChecked()), items(self.switches), over,
                      int(self.window_.design.scenario.get("seed", 0)))

    def choose_out(self) -> str:
        """Browse…: a file dialog for the row file (CSV or Parquet); the name goes to ``out``."""
        path, chosen = QFileDialog.getSaveFileName(self, "Write every design to", self.out.text() or "designs.csv",
                                                   "CSV (*.csv);;Parquet (*.parquet)")
        if path:
            if not path.lower().endswith((".csv", ".parquet")):
                path += ".parquet" if "parquet" in chosen.lower() else ".csv"
            self.out.setText(path)
        return path

    def start(self) -> None:
        from designer.errors import UsageError
        from designer.services.optimize import Chart, Written, optimize_steps, point_count, steps_to_file

        from designer.gui.messages import gui_words
        from designer.services.optimize import check

        self.cancel()
        try:
            target = self.target()
            if target.adapters and target.servers and target.switches and target.oversubscription:
                check(target, self.window_.catalog)  # before any planning, as the CLI checks
        except UsageError as exc:
            text = str(exc)
            for option, label in FIELD_WORDS.items():
                text = text.replace(f"{option} ", f"{label} ", 1) if text.startswith(option) else text
            self.status.setText(f"Cannot search: {gui_words(text)}")
            return
        if not (target.adapters and target.servers and target.switches and target.oversubscription):
            self.status.setText("Choose at least one server model, adapter, switch and oversubscription")
            return
        path = self.out.text().strip()
        if path:
            from designer.safeio import check_output_path
            from designer.services.rowfile import out_format

            try:
                out_format(path, OUT_WHAT)
                check_output_path(path, what=OUT_WHAT)
            except UsageError as exc:
                self.status.setText(f"Cannot search: {gui_words(str(exc))}")
                return
        self.outcome, self.chart = None, Chart()
        self._draw()
        self._fill([])
        self.progress.setRange(0, 0)
        self.status.setText("Planning the parallel layout of each server model…")
        self.search_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.open_button.setEnabled(False)
        self._target = target
        if not path:
            self._file = None
            self.worker = self._retired.start(
                optimize_steps, target, self.window_.catalog, workers=self.workers.value(),
                on_item=self._on_item, on_finished=self._on_finished, on_aborted=self._on_aborted,
                on_error=self._on_error)
            return
        file = self._file = (path, Written(), point_count(target))
        self.worker = self._retired.start(
            steps_to_file, target, self.window_.catalog, path, workers=self.workers.value(), written=file[1],
            what=OUT_WHAT,
            on_item=self._on_item, on_finished=self._on_finished, on_aborted=lambda: self._kept(file),
            on_error=self._on_error)

    def cancel(self, wait: bool = False) -> None:
        running = self.is_running()
        super().cancel(wait)
        if running:  # what the designs finished so far give: the chart and the front to pick from
            self._draw()
            self._fill(self.chart.front.rows)
        if running and self._file is not None:
            self.status.setText(f"Cancelled: {self._file[0]} keeps the designs finished (in search order; "
                                "the count follows once the points running have finished)")
            if wait:
                self._kept(self._file)

    def _kept(self, file: tuple[str, Any, int]) -> None:
        """A cancelled search that wrote a row file has ended: once the file is closed (its
        generator is closed in the worker thread just after the aborted signal), say what it
        keeps, unless another search has started since."""
        if self._file is not file or self.worker is not None:
            return
        path, written, total = file
        if not written.closed:
            QTimer.singleShot(20, self, lambda: self._kept(file))  # gone with the dialog
            return
        self.status.setText(f"Cancelled: {path} keeps the first {written.rows:,} of the {total:,} designs "
                            "(in search order)")

    # --- worker items (GUI thread)
    def _on_item(self, item: tuple) -> None:
        if not sent_by(self, self.worker):
            return
        if item[0] == "layouts":
            self.progress.setRange(0, max(item[2], 1))
            self.progress.setValue(0)
            self.status.setText(f"Running {item[2]} designs…")
        elif item[0] == "row":
            _, row, done, total = item
            self.chart.add(row)
            self.progress.setValue(done)
            self.status.setText(f"{done:,} of {total:,} designs run")
            if time.monotonic() - self._drawn >= REDRAW_S:
                self._draw()
        else:
            self.outcome = item[1]
            self._draw()
            self._fill(self.outcome.front)

    def _on_finished(self) -> None:
        if sent_by(self, self.worker):
            o = self.outcome
            text = (f"Done: {o.evaluated:,} designs, {o.feasible:,} meet the target, {len(o.front)} on the front"
                    if o is not None else "Done")
            if o is not None and not o.front:
                text += ": raise the deadline or the budget, or add server models"
            if self._file is not None:
                text += f"; every design written to {self._file[0]}"
            self._ended(text)
            if self.table.rowCount():
                self.table.selectRow(0)

    def _on_error(self, message: str) -> None:
        if sent_by(self, self.worker):
            from designer.gui.messages import gui_words

            self._ended(f"Cannot search: {gui_words(message)}")

    # --- plot and table
    def _draw(self) -> None:
        """The chart's points (misses, meets) and its front, titled as the report's chart."""
        self._drawn = time.monotonic()
        front = self.chart.front.rows
        on = {(r["training_time_days"], r["capex_USD"] / 1e6) for r in front}
        groups: dict[str, list[tuple[float, float]]] = {"miss": [], "meet": []}
        for x, y, ok in self.chart.points():
            if not ok:
                groups["miss"].append((x, y))
            elif (x, y) not in on:
                groups["meet"].append((x, y))
        groups["front"] = [(r["training_time_days"], r["capex_USD"] / 1e6) for r in front]
        for k, pts in groups.items():
            self.scatter[k].setData([p[0] for p in pts], [p[1] for p in pts])
        self.plot.setTitle(self.chart.shown(sep="<br>") if self.chart.count else "", size="9pt")

    def _fill(self, rows: list[dict[str, Any]]) -> None:
        self._front = list(rows)
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for col, text in enumerate(front_cells(row, i + 1)):
                item = QTableWidgetItem(text)
                if col >= 4:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                self.table.setItem(i, col, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(False)

    def selected(self) -> dict[str, Any] | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self._front[rows[0].row()] if rows else None

    def _selection_changed(self) -> None:
        self.open_button.setEnabled(self.selected() is not None and not self.is_running())

    def open_selected(self) -> bool:
        """Open the selected front design in the window (after asking to save the current one)."""
        from designer.services.optimize import design_of, point_of

        row = self.selected()
        if row is None or self.outcome is None or not self.window_.maybe_save():
            return False
        design = design_of(point_of(row, self.outcome.layouts), self._target, self.window_.catalog)
        self.window_.autosaver.discard()
        self.window_.set_document(design, None)
        self.status.setText(f"Opened: {design.name}")
        return True


def open_optimize_dialog(window) -> OptimizeDialog:
    """Show the main window's optimize dialog (created on first use)."""
    from designer.gui.widgets import show_once

    return show_once(window, "optimize_dialog", OptimizeDialog)
