"""Run → Plan layout: the best-layout search of :mod:`designer.engine.plan` in a dialog.

The search (:func:`designer.services.planning.search_steps`, as ``dpu-designer plan``) runs in
a :class:`~designer.gui.worker.GeneratorWorker`: progress arrives between its steps and Cancel takes
effect at the next one (during the estimate every few hundred layouts, then as each engine run
finishes). The engine runs go to ``Workers`` local processes (default: all cores; 1: in the
search thread), the same ranking for any number. The ranked layouts fill a table, the reasons the others were left out a list below it.
Apply sets the chosen row's layout on the design's workload through the editor (one undo step);
the search itself works on a copy of the design and never changes it.

Entry point: :func:`open_plan_dialog` (one dialog per main window, reused).
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QHBoxLayout, QHeaderView,
                               QLabel, QPlainTextEdit, QProgressBar, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from designer.gui.worker import GeneratorWorker, RetiredWorkers, SearchDialog, sent_by

COLUMNS = ("#", "Layout", "GPUs", "Iteration s", "MFU", "GB/GPU", "Tokens/s")
_STAGES = {"estimate": "Estimating layouts", "engine": "Running the engine on the best"}


def plan_rows(result) -> list[tuple[Any, list[str]]]:
    """(candidate, cells) for each layout shown: rank, layout (the design's marked), figures."""
    rows = []
    from designer.services.style import figure  # one precision per fact, as the CLI's plan

    for c in result.shown:
        twins = result.alike(c)
        mine = c.current or any(t.current for t in twins)
        rows.append((c, [str(result.rank(c)), c.label + ("  (design)" if mine else "")
                         + (f"  (+{len(twins)} alike)" if twins else ""), str(c.gpus),
                         figure("seconds", c.iteration_time_s), f"{figure('percent', 100 * c.mfu)}%",
                         f"{c.memory_GB:.1f}" if c.memory_GB is not None else "-",
                         figure("tokens_per_s", c.tokens_per_s)]))
    return rows


def dropped_lines(result) -> list[str]:
    from designer.engine.plan import REASONS

    lines = [f"Searched {result.searched} layouts of {result.workload} on {result.gpus} GPUs: "
             f"{result.fit} fit in {result.memory_cap_GB:.1f} GB per GPU, {len(result.ranked)} ran "
             f"through the engine ({result.seconds:.1f} s)."]
    if result.current_note:
        lines.append(result.current_note[0].upper() + result.current_note[1:] + ".")
    from designer.services.planning import settled

    text = settled(result).replace("--evaluate", "Engine runs")
    lines.append(text[0].upper() + text[1:] + ".")
    for key, n in result.dropped.most_common():
        ex = result.examples.get(key)
        lines.append(f"{n} dropped: {REASONS[key]}" + (f" (e.g. {ex})" if ex else ""))
    return lines


class PlanDialog(SearchDialog, QDialog):
    """Top N / engine runs, Search/Cancel with progress, the ranked layouts, Apply."""

    busy_note = "Cancelled (the current engine run finishes in the background)"

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Plan layout")
        self.window_ = window
        self.worker: GeneratorWorker | None = None
        self._retired = RetiredWorkers(self)
        self.result = None
        self._searched: Any = None  #: the design the result is for
        self._candidates: list = []
        self.top = QSpinBox()
        self.top.setRange(1, 50)
        self.top.setValue(5)
        self.top.setToolTip("layouts to show")
        self.evaluate = QSpinBox()
        self.evaluate.setRange(1, 100)
        self.evaluate.setValue(6)
        self.evaluate.setToolTip("layouts run through the full engine (the best estimates); more is "
                                 "slower and surer")
        self.workers = QSpinBox()
        self.workers.setRange(1, 256)
        self.workers.setValue(os.cpu_count() or 1)
        self.workers.setToolTip("local processes the engine runs go to (1: in the search thread); "
                                "the ranking does not depend on it")
        self.search_button = QPushButton("Search")
        self.search_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.apply_button = QPushButton("Apply layout")
        self.apply_button.setEnabled(False)
        self.apply_button.setToolTip("set the selected layout on the design's workload (undoable)")
        close = QPushButton("Close")
        self.progress = QProgressBar()
        self.status = QLabel("Search the fastest layout of the design's workload that fits in GPU memory")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self.apply_selected())
        self.notes = QPlainTextEdit()
        self.notes.setReadOnly(True)
        self.notes.setMaximumHeight(140)
        buttons = QHBoxLayout()
        for w in (QLabel("Show the best"), self.top, QLabel("Engine runs"), self.evaluate,
                  QLabel("Workers"), self.workers, self.search_button, self.cancel_button):
            buttons.addWidget(w)
        buttons.addWidget(self.progress, 1)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.apply_button)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.notes)
        layout.addLayout(bottom)
        self.search_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.apply_button.clicked.connect(self.apply_selected)
        close.clicked.connect(self.close)
        window.installEventFilter(self)  # the main window closing stops a search
        self.resize(860, 560)

    # --- running
    def start(self) -> None:
        from designer.services.planning import search_steps

        self.cancel()
        design = self.window_.design
        self._searched = design
        self.result = None
        self._fill([])
        self.notes.clear()
        self.progress.setRange(0, 0)
        self.status.setText("Searching…")
        self.search_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.apply_button.setEnabled(False)
        self.worker = self._retired.start(
            search_steps, design.copy(), self.window_.catalog, top=self.top.value(),
            evaluate=max(self.evaluate.value(), self.top.value()),
            seed=int(design.scenario.get("seed", 0)), workers=self.workers.value(),
            on_item=self._on_item, on_finished=self._on_finished, on_aborted=self._on_aborted,
            on_error=self._on_error)

    # --- worker items (GUI thread)
    def _on_item(self, item: tuple) -> None:
        if not sent_by(self, self.worker):
            return
        if item[0] == "progress":
            _, stage, done, total = item
            self.progress.setRange(0, max(total, 1))
            self.progress.setValue(done)
            self.status.setText(f"{_STAGES[stage]}: {done} of {total}")
        else:
            self.result = item[1]
            self._fill(plan_rows(self.result))
            self.notes.setPlainText("\n".join(dropped_lines(self.result)))

    def _on_finished(self) -> None:
        if sent_by(self, self.worker):
            best = self.result.best
            self._ended(f"Done: best {best.label}, {best.iteration_time_s:.3f} s per iteration, "
                        f"MFU {100 * best.mfu:.1f}%")
            if self.table.rowCount():
                self.table.selectRow(0)

    def _on_error(self, message: str) -> None:
        if sent_by(self, self.worker):
            self._ended(f"Error: {message}")

    # --- table and apply
    def _fill(self, rows: list[tuple[Any, list[str]]]) -> None:
        self._candidates = [c for c, _ in rows]
        self.table.setRowCount(len(rows))
        for r, (cand, cells) in enumerate(rows):
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col != 1:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                if cand.current:
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
                item.setToolTip(", ".join(f"{k} {v:.3g} s" for k, v in cand.breakdown_s.items() if v)
                                if cand.breakdown_s else "")
                self.table.setItem(r, col, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)

    def selected(self):
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self._candidates[rows[0].row()] if rows else None

    def _selection_changed(self) -> None:
        cand = self.selected()
        self.apply_button.setEnabled(cand is not None and not cand.current and not self.is_running())

    def apply_selected(self) -> bool:
        """Set the selected layout on the design's workload (one undo step); False if nothing
        was applied (no row, the design's own layout, or another design open now)."""
        from designer.engine.plan import apply

        cand = self.selected()
        if cand is None or cand.current:
            return False
        if self.window_.design is not self._searched:
            self.status.setText("Another design is open now: search again before applying")
            return False
        self.window_.editor.set_design("workload", apply(self.window_.design, cand.layout),
                                       f"layout {cand.label}")
        self.status.setText(f"Applied {cand.label} to the workload (Edit → Undo takes it back)")
        self.apply_button.setEnabled(False)
        return True


def open_plan_dialog(window) -> PlanDialog:
    """Show the main window's plan dialog (created on first use)."""
    from designer.gui.widgets import show_once

    return show_once(window, "plan_dialog", PlanDialog)
