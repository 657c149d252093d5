"""The property inspector: typed editors (with units and ranges) for the selected components/links.

Editors come from ``kinds.FIELDS``. A value that differs from the catalog model is shown in bold
with a reset button. With several items selected, only the fields they share are shown; a field
whose values differ shows blank until edited, and an edit sets it on all of them (one undo step).

Price: every priced kind has a Price (USD), Price date and Price source field (``kinds.PRICE_FIELDS``,
the component's ``price_USD``/``price_date``/``price_source``). Empty, the catalog price applies and
is the field's placeholder ("2,500 · list 2025-03": ``services.cost.PriceBook.part``, the price the
bill uses without the component's own); a number there is the component's own price (basis
"component" in ``cost``, the Engine results and the report). With nothing selected the inspector
shows the design's site figures of the TCO (lifetime, PUE, electricity price, space rate, support %:
``meta.costs.site``, as ``dpu-designer cost --pue ... --save`` writes them), empty = the packaged
figure. Every edit is one step on the undo stack.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QScrollArea, QSpinBox, QToolButton, QVBoxLayout,
                               QWidget)

from designer.gui.editor import Editor, RefusedEdit
from designer.gui.widgets import narrow_combo
from designer.topology.kinds import CATALOG_KIND, FIELDS, KIND_LABEL, LINK_FIELDS, PRICE_FIELDS, FieldSpec
from designer.services import cost
from designer.services.cabling import counts_text
from designer.topology.management import switches_text

MIXED = "(several values)"
#: prefix of the site figures' editor names (``editors["site:pue"]``)
SITE = "site:"
#: the site figures' labels, short enough for the dock (the tooltips say them whole)
SITE_SHORT = {"lifetime_years": "Lifetime (years)", "pue": "PUE", "price_per_kWh": "Energy (USD/kWh)",
              "space_USD_per_kW_month": "Space (USD/kW-month)", "support_fraction_per_year": "Support (%/year)"}
#: px an editor may shrink to (a spin box asks for room for its range's widest value)
EDITOR_MIN_WIDTH = 90


#: at most this many characters of a name go into a word-wrapped label: wrapping a 20 MB name
#: took Qt minutes (a ``--screenshot`` timed out); the full name stays in the document
NAME_CHARS = 200


def capped(text: str, limit: int = NAME_CHARS) -> str:
    """``text`` cut to ``limit`` characters and "…" when longer."""
    return text if len(text) <= limit else text[:limit] + "…"


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
                          f"Design: {capped(self.editor.design.name)}\n"
                          f"{len(topo.servers()):,} GPU servers, {switches_text(topo)}, "
                          f"{counts_text(topo)}")
            hint.setWordWrap(True)
            hint.setObjectName("hint")
            outer.addWidget(hint)
            self._add_site(outer)
            outer.addStretch(1)
            self.setWidget(body)
            self.refresh()
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

    def _add_site(self, outer: QVBoxLayout) -> None:
        """The design's site figures of the TCO (``services.cost.SITE_FIELDS``), each empty for
        the packaged figure (its placeholder)."""
        head = QLabel("Site figures (TCO)")
        head.setObjectName("inspectorTitle")
        head.setToolTip("what dpu-designer cost, the Engine results and the report count over the "
                        "design's lifetime; empty = the packaged figure (models/costs)")
        outer.addWidget(head)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignRight)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        outer.addLayout(form)
        try:
            packaged = cost.PriceBook(self.editor.catalog).site
        except (KeyError, ValueError, TypeError):
            packaged = {}
        for key, unit in cost.SITE_FIELDS.items():
            edit = QLineEdit()
            fig = packaged.get(key)
            unit = "% of CapEx a year" if key == "support_fraction_per_year" else unit
            if fig is not None:
                shown = 100 * fig.value if key == "support_fraction_per_year" else fig.value
                edit.setPlaceholderText(f"{shown:g}")
                edit.setProperty("tip", f"{cost.SITE_LABELS[key]} ({unit or 'ratio'}); empty = {shown:g}, "
                                        f"{fig.basis}: {fig.source}".replace("(ratio)", "(facility / IT power)"))
            edit.editingFinished.connect(lambda k=key, e=edit: self._edit_site(k, e))
            label = SITE_SHORT[key]
            self._add(form, SITE + key, label, edit)
            edit.setToolTip(edit.property("tip") or label)
            edit.property("label").setToolTip(edit.toolTip())

    def _site_value(self, key: str) -> float | None:
        """The design's own value of a site figure as the editor shows it (support in percent)."""
        site = ((self.editor.design.meta or {}).get("costs") or {}).get("site") or {}
        value = site.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return 100 * value if key == "support_fraction_per_year" else float(value)

    def _edit_site(self, key: str, edit: QLineEdit) -> None:
        if self._updating:
            return
        try:
            value = parse_number(edit.text())
            if value is not None and key == "support_fraction_per_year":
                value /= 100.0
            problem = None if value is None else cost.site_problem(key, value)
            if problem and key == "support_fraction_per_year":
                problem = "must be 0 to 100 % of CapEx a year"
            if problem:
                self.editor.refuse(f"{cost.SITE_LABELS[key]} {edit.text().strip()}: {problem}")
            old = ((self.editor.design.meta or {}).get("costs") or {}).get("site", {}).get(key)
            if value != old:
                self.editor.set_design("meta", cost.with_site(self.editor.design.meta, {key: value}),
                                       label=f"site figure {cost.SITE_LABELS[key]}")
        except (RefusedEdit, ValueError) as exc:
            if not isinstance(exc, RefusedEdit):
                try:
                    self.editor.refuse(f"{cost.SITE_LABELS[key]} {edit.text().strip()!r}: {exc}")
                except RefusedEdit:
                    pass
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
        reset.clicked.connect(lambda _=False, n=name: self._reset(n))
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

    def _reset(self, name: str) -> None:
        if name.startswith(SITE):
            key = name[len(SITE):]
            self.editor.set_design("meta", cost.with_site(self.editor.design.meta, {key: None}),
                                   label=f"site figure {cost.SITE_LABELS[key]}")
            self.refresh()
        else:
            self._edit(name, None)

    def _text_editor(self, spec: FieldSpec) -> QWidget:
        """A line edit for a field that may be left empty (the price fields, a text field): empty
        means no value of the component's own; a number field's text is checked by its spec."""
        edit = QLineEdit()
        edit.setClearButtonEnabled(True)

        def done() -> None:
            if self._updating or not self.ids:
                return
            text = edit.text().strip()
            try:
                if spec.type == "float":
                    value: Any = parse_number(text)
                    problem = None if value is None else spec.check(value)
                    if problem:
                        self.editor.refuse(f"{spec.label} {text}: {problem}")
                else:
                    value = text or None
            except RefusedEdit:  # (a ValueError: first)
                self.refresh()
                return
            except ValueError as exc:
                try:
                    self.editor.refuse(f"{spec.label} {text!r}: {exc}")
                except RefusedEdit:
                    pass
                self.refresh()
                return
            values, _ = self._values(spec.name)
            if not all(v == value for v in values):
                self._edit(spec.name, value)
            else:
                self.refresh()

        edit.editingFinished.connect(done)
        return edit

    def _placeholders(self) -> dict[str, str]:
        """What applies to the selection when a price field is empty: the catalog's price, its
        date and its source (``PriceBook.part`` without the component's own price), by field."""
        topo = self.editor.topo
        try:
            book = cost.price_book(self.editor.design, self.editor.catalog)
        except (KeyError, ValueError, TypeError):
            return {}
        models = {(c.kind, c.model) for c in (topo.components[i] for i in self.ids if i in topo.components)}
        prices = {book.part(kind, model) for kind, model in models}  # per model: 24,498 selected, ~20 ms
        if len(prices) != 1:
            return dict.fromkeys(PRICE_FIELDS, MIXED)
        p = prices.pop()
        usd = "no catalog price" if p.USD is None else \
            f"{show_number(p.USD)} · {p.basis}" + (f" {p.date}" if p.date else "")
        return {"price_USD": usd, "price_date": p.date, "price_source": p.source}

    def _field_editor(self, spec: FieldSpec) -> QWidget:
        if spec.name in PRICE_FIELDS or spec.type == "str":
            edit = self._text_editor(spec)
            edit.setProperty("help", spec.help or spec.label)
            return edit
        if spec.type == "bool":
            box = QCheckBox()
            box.setTristate(False)
            box.clicked.connect(lambda checked: self._edit(spec.name, bool(checked)))
            return box
        if spec.type == "choice":
            box = narrow_combo(QComboBox())
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
        if name.startswith(SITE):
            value = self._site_value(name[len(SITE):])
            return [value], value is not None
        if name in PRICE_FIELDS:  # components only; the component's own (the catalog's: the placeholder)
            props = [topo.components[i].props or {} for i in self.ids]
            return [p.get(name) for p in props], any(name in p for p in props)
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
            held = self._placeholders() if any(n in PRICE_FIELDS for n in self.editors) else {}
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
                if name in PRICE_FIELDS:
                    widget.setPlaceholderText(held.get(name, "") if same else MIXED)
                    widget.setToolTip(f"{widget.property('help')}\nempty: {held.get(name) or '-'}")
                if changed:
                    label.setToolTip("changed from the catalog model; ↺ resets it" if not name.startswith(SITE)
                                     else "set for this design; ↺ goes back to the packaged figure")
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
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                widget.setText(show_number(value))
            else:
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


def show_number(value: float) -> str:
    """A price or site figure as its editor shows it: thousands separated, no trailing zeros
    (2,500; 1,234.5; 0.12)."""
    text = f"{value:,.6f}".rstrip("0").rstrip(".")
    return text or "0"


def parse_number(text: str) -> float | None:
    """The number typed into a price or site field ("$2,500", "1 650.50", "0.12"), None when
    empty; ValueError naming what to type otherwise."""
    import math

    t = text.strip().replace("$", "").replace(",", "").replace(" ", "").replace("\u00a0", "")
    if t.upper().endswith("USD"):
        t = t[:-3]
    if not t:
        return None
    try:
        value = float(t)
    except ValueError:
        raise ValueError("not a number; type one, e.g. 2500, or leave it empty for the catalog figure") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number; type one, e.g. 2500")
    return value
