"""The property inspector: typed editors (with units and ranges) for the selected components/links.

Editors come from ``kinds.FIELDS``. A value that differs from the catalog model is shown in bold
with a reset button. With several items selected, only the fields they share are shown; a field
whose values differ shows blank until edited, and an edit sets it on all of them (one undo step).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QScrollArea, QSpinBox, QToolButton, QVBoxLayout,
                               QWidget)

from designer.gui.editor import Editor, RefusedEdit
from designer.gui.widgets import narrow_combo
from designer.topology.kinds import CATALOG_KIND, FIELDS, KIND_LABEL, LINK_FIELDS, FieldSpec
from designer.services.cabling import counts_text

MIXED = "(several values)"
#: px an editor may shrink to (a spin box asks for room for its range's widest value)
EDITOR_MIN_WIDTH = 90


def shared_specs(kinds: set[str]) -> list[FieldSpec]:
    """Fields common to all ``kinds`` (by name and type), in the order of the first kind."""
    kinds = sorted(kinds)
    if not kinds:
        return []
    if kinds == ["link"]:
        return list(LINK_FIELDS)
    if "link" in kinds:
        return []
    first = FIELDS[kinds[0]]
    others = [{(s.name, s.type) for s in FIELDS[k]} for k in kinds[1:]]
    return [s for s in first if all((s.name, s.type) in o for o in others)]


class Inspector(QScrollArea):
    """Shows and edits the selection; rebuilt when the selection changes, refreshed on edits."""

    def __init__(self, editor: Editor, parent=None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.ids: list[str] = []
        self.editors: dict[str, QWidget] = {}
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the form fits the dock's width
        self._updating = False
        self.show_ids([])

    # --------------------------------------------------------------- build
    def show_ids(self, ids: list[str]) -> None:
        self.ids = list(ids)
        self.editors = {}
        body = QWidget()
        outer = QVBoxLayout(body)
        outer.setContentsMargins(8, 8, 8, 8)
        topo = self.editor.topo
        if not ids:
            hint = QLabel("Select a component or a link to see and edit its figures.\n\n"
                          f"Design: {self.editor.design.name}\n"
                          f"{len(topo.servers()):,} GPU servers, {len(topo.switches()):,} switches, "
                          f"{counts_text(topo)}")
            hint.setWordWrap(True)
            hint.setObjectName("hint")
            outer.addWidget(hint)
            outer.addStretch(1)
            self.setWidget(body)
            return
        kinds = {("link" if i in topo.links else topo.components[i].kind) for i in ids}
        title = QLabel(self._title(ids, kinds))
        title.setObjectName("inspectorTitle")
        title.setWordWrap(True)
        outer.addWidget(title)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignRight)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        outer.addLayout(form)
        if len(kinds) == 1 and "link" not in kinds:
            kind = next(iter(kinds))
            if len(ids) == 1:
                self._add(form, "name", "Name", self._name_editor())
            self._add(form, "model", "Model", self._model_editor(kind))
        for spec in shared_specs(kinds):
            self._add(form, spec.name, spec.label, self._field_editor(spec), spec)
        if len(ids) == 1 and ids[0] in topo.links:
            link = topo.links[ids[0]]
            form.addRow("Ends", QLabel(f"{link.a} – {link.b}"))
        outer.addStretch(1)
        self.setWidget(body)
        self.refresh()

    def _title(self, ids, kinds) -> str:
        if len(ids) == 1:
            i = ids[0]
            if "link" in kinds:
                return f"Link {i}"
            comp = self.editor.topo.components[i]
            return f"{KIND_LABEL[comp.kind]} {comp.id}{self._where(comp)}"
        names = ", ".join(sorted(KIND_LABEL.get(k, "cable") for k in kinds))
        return f"{len(ids)} selected ({names})"

    def _where(self, comp) -> str:
        """Where a component sits, in the words of the rack elevation: a rack member's U range
        ("in rack-1 at U5–U14", U 1 at the bottom; ``slot`` is its lowest U and it spans its
        ``rack_units_used``), a NIC/DPU's PCIe slot on its server."""
        topo = self.editor.topo
        parent = topo.components.get(comp.parent) if comp.parent else None
        if parent is None:
            return ""
        if parent.kind == "rack":
            if comp.slot is None:
                return f" · in {parent.id}, no U position yet"
            try:
                units = int(self.editor.catalog.resolve(comp).get("rack_units_used") or 1)
            except (KeyError, TypeError, ValueError):
                units = 1
            top = comp.slot + units - 1
            return f" · in {parent.id} at U{comp.slot}" + (f"–U{top}" if top > comp.slot else "")
        return f" · on {parent.id}" + (f", PCIe slot {comp.slot}" if comp.slot is not None else "")

    def _add(self, form: QFormLayout, name: str, label: str, widget: QWidget,
             spec: FieldSpec | None = None) -> None:
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        widget.setMinimumWidth(EDITOR_MIN_WIDTH)  # not as wide as the widest value the range allows
        lay.addWidget(widget, 1)
        reset = QToolButton(text="↺")
        reset.setToolTip("Back to the catalog value")
        reset.setAutoRaise(True)
        reset.clicked.connect(lambda _=False, n=name: self._edit(n, None))
        lay.addWidget(reset)
        reset.setVisible(False)
        lab = QLabel(label)
        if spec is not None:
            tip = spec.help or spec.label
            if spec.min is not None or spec.max is not None:
                tip += f"\nrange {spec.min:g} … {spec.max:g} {spec.unit}".rstrip()
            lab.setToolTip(tip)
            widget.setToolTip(tip)
        form.addRow(lab, row)
        widget.setProperty("field", name)
        widget.setProperty("label", lab)
        widget.setProperty("reset", reset)
        self.editors[name] = widget

    def _name_editor(self) -> QWidget:
        edit = QLineEdit()
        edit.editingFinished.connect(lambda: self._edit("name", edit.text().strip() or self.ids[0]))
        return edit

    @staticmethod
    def _add_entry(box: QComboBox, entry: dict) -> None:
        """A catalog entry as a list item: its name (the part before any parenthesised detail),
        the catalog id and the whole name in the item's tooltip; the id is the item's data."""
        name = entry.get("name") or entry["id"]
        short = name.split(" (")[0].strip() or name
        box.addItem(short, entry["id"])
        box.setItemData(box.count() - 1, f"{name}\ncatalog id: {entry['id']}", Qt.ToolTipRole)

    def _model_editor(self, kind: str) -> QWidget:
        box = narrow_combo(QComboBox())
        for entry in self.editor.catalog.entries(CATALOG_KIND[kind]):
            self._add_entry(box, entry)
        box.activated.connect(lambda i: self._edit("model", box.itemData(i)))
        return box

    def _field_editor(self, spec: FieldSpec) -> QWidget:
        if spec.type == "bool":
            box = QCheckBox()
            box.setTristate(False)
            box.clicked.connect(lambda checked: self._edit(spec.name, bool(checked)))
            return box
        if spec.type in ("choice", "str"):
            box = narrow_combo(QComboBox())
            box.setEditable(spec.type == "str")
            if spec.choices_from:
                for entry in self.editor.catalog.entries(spec.choices_from):
                    self._add_entry(box, entry)
            else:
                for c in spec.choices:
                    box.addItem(c, c)
            box.activated.connect(lambda i: self._edit(spec.name, box.itemData(i)))
            return box
        spin = QSpinBox() if spec.type == "int" else QDoubleSpinBox()
        if spec.type == "float":
            spin.setDecimals(3 if (spec.max or 0) < 100 else 1)
        lo = spec.min if spec.min is not None else -1e9
        hi = spec.max if spec.max is not None else 1e9
        spin.setRange(int(lo) if spec.type == "int" else lo, int(hi) if spec.type == "int" else hi)
        if spec.unit:
            spin.setSuffix(f" {spec.unit}")
        spin.setKeyboardTracking(False)
        spin.setAccelerated(True)
        spin.setSpecialValueText("")
        spin.valueChanged.connect(lambda v: self._edit(spec.name, v))
        return spin

    # -------------------------------------------------------------- values
    def _values(self, name: str) -> tuple[list[Any], bool]:
        """Effective values of a field over the selection, and whether any is overridden."""
        topo, cat = self.editor.topo, self.editor.catalog
        values, changed = [], False
        for i in self.ids:
            if i in topo.links:
                values.append(getattr(topo.links[i], name))
                continue
            comp = topo.components[i]
            if name in ("name", "model"):
                values.append(comp.name or comp.id if name == "name" else comp.model)
                continue
            try:
                values.append(cat.resolve(comp).get(name))
            except KeyError:
                values.append(comp.props.get(name))
            changed |= name in comp.props
        return values, changed

    def refresh(self) -> None:
        """Show the model's current values (after any change, including undo)."""
        topo = self.editor.topo
        if any(i not in topo.components and i not in topo.links for i in self.ids):
            self.show_ids([i for i in self.ids if i in topo.components or i in topo.links])
            return
        self._updating = True
        try:
            for name, widget in self.editors.items():
                values, changed = self._values(name)
                same = all(v == values[0] for v in values)
                self._show(widget, values[0] if same else None, same)
                label, reset = widget.property("label"), widget.property("reset")
                font = label.font()
                font.setBold(changed)
                label.setFont(font)
                label.setText(label.text().rstrip(" *") + (" *" if changed else ""))
                reset.setVisible(changed)
                if changed:
                    label.setToolTip("changed from the catalog model; ↺ resets it")
        finally:
            self._updating = False

    def _show(self, widget: QWidget, value: Any, same: bool) -> None:
        if isinstance(widget, QCheckBox):
            widget.setChecked(bool(value))
        elif isinstance(widget, QComboBox):
            idx = widget.findData(value) if same else -1
            if idx < 0 and same and value is not None:
                widget.addItem(str(value), value)
                idx = widget.count() - 1
            widget.setCurrentIndex(idx)
        elif isinstance(widget, QLineEdit):
            widget.setText("" if value is None else str(value))
        elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            if same and value is not None:
                widget.setSpecialValueText("")
                widget.setValue(value)
            else:
                widget.setSpecialValueText(MIXED)
                widget.setValue(widget.minimum())

    def _edit(self, name: str, value: Any) -> None:
        if self._updating or not self.ids:
            return
        try:
            self.editor.set_fields(self.ids, name, value)
        except RefusedEdit:
            pass  # the editor already reported it
        self.refresh()
