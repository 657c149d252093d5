"""The "New from template" dialog: pick a generator of ``designer.topology.templates`` and its options.

Each option's row has a short label (:data:`OPTION_LABEL`; the option's whole help text is the
tooltip of the label and of the editor, so nothing is cut off), catalog models are listed by
name (the id follows it and is what the design stores), and the dialog offers the template and
values chosen last time (``QSettings`` group ``template_dialog``).
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout,
                               QLabel, QLineEdit, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from designer.topology.templates import TEMPLATES, Option

#: short row labels of the template options (the help text is the tooltip)
OPTION_LABEL = {
    "servers": "GPU servers", "oversubscription": "Oversubscription", "server": "Server model",
    "gpus_per_server": "GPUs per server", "nic": "NIC model", "dpu": "DPU model",
    "switch": "Switch model", "storage": "Storage", "storage_model": "Storage model",
    "storage_count": "Storage appliances", "storage_switch": "Storage switch", "rack": "Rack model",
    "servers_per_rack": "Servers per rack", "frontend": "Front-end network",
    "frontend_switch": "Front-end switch", "name": "Design name", "k": "Switch radix (k)",
    "su_size": "Servers per SU", "rails_per_leaf": "Rails per leaf",
    "management": "Management network", "management_switch": "Management switch",
    "management_aggregation": "Management aggregation",
}
#: words of the choice options
CHOICE_LABEL = {"separate": "own fabric", "converged": "on the compute fabric", "none": "none",
                "ethernet": "Ethernet", "oob": "out-of-band (BMCs, DPU OOB ports)",
                "oob+inband": "out-of-band + in-band (front-end)"}
#: QSettings group of the last choice
SETTINGS_GROUP = "template_dialog"


def option_label(template: str, opt: Option) -> str:
    """The row label of an option: :data:`OPTION_LABEL`, else its name in words."""
    if template == "nvl72" and opt.name == "servers":
        return "NVL72 racks"
    if template == "nvl72" and opt.name == "su_size":
        return "Racks per SU"
    text = OPTION_LABEL.get(opt.name) or opt.name.replace("_", " ")
    return text[:1].upper() + text[1:]


def short_name(name: str) -> str:
    """A catalog name without its parenthesised detail ("NVIDIA Quantum-2 QM9700 (64x NDR ...)"
    -> "NVIDIA Quantum-2 QM9700"); the whole name is the item's tooltip."""
    head = name.split(" (")[0].strip()
    return head or name


class TemplateDialog(QDialog):
    def __init__(self, catalog, parent=None, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New design from a template")
        self.catalog = catalog
        self.settings = settings
        self.kind = QComboBox()
        self.kind.setToolTip("The network layout the design is generated with")
        self.pages = QStackedWidget()
        self.help = QLabel()
        self.help.setWordWrap(True)
        self.fields: dict[str, dict[str, QWidget]] = {}
        for name, template in TEMPLATES.items():
            self.kind.addItem(template.label, name)
            page = QWidget()
            form = QFormLayout(page)
            form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
            self.fields[name] = {}
            for opt in template.options:
                widget = self._editor(opt)
                tip = opt.help[:1].upper() + opt.help[1:]
                widget.setToolTip(tip)
                label = QLabel(option_label(name, opt))
                label.setToolTip(tip)
                label.setBuddy(widget)
                form.addRow(label, widget)
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
        self.restore()
        self.setMinimumWidth(max(560, self.sizeHint().width()))

    def _editor(self, opt: Option) -> QWidget:
        if opt.catalog or opt.type == "choice":
            box = QComboBox()
            if opt.catalog and opt.default == "":
                box.addItem("none (plain NICs)" if opt.name == "dpu" else "(as the template chooses)", "")
            if opt.type == "choice":
                for v in opt.choices:
                    box.addItem(CHOICE_LABEL.get(v, v), v)
            else:
                for entry in self.catalog.entries(opt.catalog):
                    name = entry.get("name", entry["id"])
                    box.addItem(short_name(name), entry["id"])
                    box.setItemData(box.count() - 1, f"{name}\ncatalog id: {entry['id']}", Qt.ToolTipRole)
            box.setCurrentIndex(max(0, box.findData(opt.default)))
            return box
        if opt.type == "int":
            spin = QSpinBox()
            spin.setRange(int(opt.min) if opt.min is not None else -10**9, 10**9)
            spin.setValue(int(opt.default))
            zero = re.search(r"\(0: ([^)]*)\)", opt.help)  # "(0: as the server model has)"
            if zero and spin.minimum() == 0:
                spin.setSpecialValueText(zero.group(1))  # shown at 0, the minimum
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

    # --- the last choice
    def remember(self) -> None:
        """Keep the chosen template and its values for the next time (the window calls it on OK)."""
        if self.settings is None:
            return
        name, values = self.choice()
        self.settings.beginGroup(SETTINGS_GROUP)
        self.settings.setValue("template", name)
        for key, value in values.items():
            self.settings.setValue(f"{name}/{key}", value)
        self.settings.endGroup()
        self.settings.sync()

    def restore(self) -> None:
        """Offer the template and values chosen last time (a value that no longer fits its
        field, e.g. a model gone from the catalog, keeps the field's default)."""
        if self.settings is None:
            return
        self.settings.beginGroup(SETTINGS_GROUP)
        try:
            name = self.settings.value("template")
            if name in self.fields:
                self.kind.setCurrentIndex(self.kind.findData(name))
            for tname, widgets in self.fields.items():
                for key, widget in widgets.items():
                    value = self.settings.value(f"{tname}/{key}")
                    if value is None:
                        continue
                    try:
                        if isinstance(widget, QComboBox):
                            i = widget.findData(str(value))
                            if i >= 0:
                                widget.setCurrentIndex(i)
                        elif isinstance(widget, QSpinBox):
                            widget.setValue(int(value))
                        elif isinstance(widget, QDoubleSpinBox):
                            widget.setValue(float(value))
                        else:
                            widget.setText(str(value))
                    except (TypeError, ValueError):
                        continue
        finally:
            self.settings.endGroup()
