"""The problems list: validation findings of the design; activating one jumps to its item."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QStyle, QTreeWidget, QTreeWidgetItem

_TARGET = Qt.UserRole + 1


class ProblemsList(QTreeWidget):
    """One row per :class:`~designer.topology.validation.Problem` (errors first)."""

    goto = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["", "Item", "Problem", "How to fix"])
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        self.setColumnWidth(0, 28)
        self.setColumnWidth(1, 110)
        self.setColumnWidth(2, 420)
        self.itemActivated.connect(self._activated)
        self.itemClicked.connect(self._activated)
        self.problems: list = []
        #: what the empty list says (the window says "checking" until the first check is done)
        self.empty_text = ""

    def set_problems(self, problems, empty_text: str = "No problems found: the design passes "
                     "every check.") -> None:
        self.empty_text = empty_text
        self.viewport().update()
        self.problems = sorted(problems, key=lambda p: (p.severity != "error", p.component or p.link or ""))
        self.clear()
        style = self.style()
        icons = {"error": style.standardIcon(QStyle.SP_MessageBoxCritical),
                 "warning": style.standardIcon(QStyle.SP_MessageBoxWarning)}
        rows = []
        for p in self.problems:
            target = p.component or p.link or ""
            row = QTreeWidgetItem(["", target, p.message, p.hint])
            row.setIcon(0, icons.get(p.severity, icons["warning"]))
            row.setToolTip(0, p.severity)
            row.setToolTip(2, f"{p.severity} [{p.code}]: {p.message}")
            row.setToolTip(3, p.hint)
            row.setData(0, _TARGET, target)
            rows.append(row)
        self.addTopLevelItems(rows)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if not self.problems and self.empty_text:
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().placeholderText().color())
            painter.drawText(self.viewport().rect().adjusted(12, 8, -12, -8),
                             Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, self.empty_text)

    def counts(self) -> tuple[int, int]:
        errors = sum(p.severity == "error" for p in self.problems)
        return errors, len(self.problems) - errors

    def _activated(self, row: QTreeWidgetItem, _column: int = 0) -> None:
        target = row.data(0, _TARGET)
        if target:
            self.goto.emit(target)
