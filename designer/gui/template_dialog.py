"""The "New from template" dialog: pick a generator of ``designer.topology.templates`` and its options."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout,
                               QLabel, QLineEdit, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from designer.topology.templates import TEMPLATES, Option


class TemplateDialog(QDialog):
    def __init__(self, catalog, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New design from a template")
        self.catalog = catalog
        self.kind = QComboBox()
        self.pages = QStackedWidget()
        self.help = QLabel()
        self.help.setWordWrap(True)
        self.fields: dict[str, dict[str, QWidget]] = {}
        for name, template in TEMPLATES.items():
            self.kind.addItem(template.label, name)
            page = QWidget()
            form = QFormLayout(page)
            self.fields[name] = {}
            for opt in template.options:
                widget = self._editor(opt)
                widget.setToolTip(opt.help)
                form.addRow(opt.help[:48] + ("…" if len(opt.help) > 48 else ""), widget)
                self.fields[name][opt.name] = widget
            self.pages.addWidget(page)
        self.kind.currentIndexChanged.connect(self._switch)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.kind)
        layout.addWidget(self.help)
        layout.addWidget(self.pages)
        layout.addWidget(buttons)
        self._switch(0)

    def _editor(self, opt: Option) -> QWidget:
        if opt.catalog or opt.type == "choice":
            box = QComboBox()
            values = list(opt.choices) if opt.type == "choice" else self.catalog.ids(opt.catalog)
            if opt.catalog and opt.default == "":
                box.addItem("(default)", "")
            for v in values:
                box.addItem(v, v)
            box.setCurrentIndex(max(0, box.findData(opt.default)))
            return box
        if opt.type == "int":
            spin = QSpinBox()
            spin.setRange(int(opt.min) if opt.min is not None else -10**9, 10**9)
            spin.setValue(int(opt.default))
            return spin
        if opt.type == "float":
            spin = QDoubleSpinBox()
            spin.setRange(opt.min if opt.min is not None else -1e9, 1e9)
            spin.setValue(float(opt.default))
            return spin
        return QLineEdit(str(opt.default))

    def _switch(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self.help.setText(TEMPLATES[self.kind.itemData(index)].help)

    def choice(self) -> tuple[str, dict[str, Any]]:
        """The chosen template name and its options."""
        name = self.kind.currentData()
        values = {}
        for key, widget in self.fields[name].items():
            if isinstance(widget, QComboBox):
                values[key] = widget.currentData()
            elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
                values[key] = widget.value()
            else:
                values[key] = widget.text()
        return name, values
