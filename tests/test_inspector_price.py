"""A component's price and the design's site figures edited in the inspector (offscreen): the bill
and the CapEx move by exactly the difference, undo puts them back, save/load keeps them, bad text
is refused with a message."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from designer.gui.inspector import parse_number, show_number
from designer.gui.testing import open_window
from designer.services import cost
from designer.topology import fileformat


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def _type(qtbot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text) if text else edit.clear()
    qtbot.keyClick(edit, Qt.Key_Return)


def _lines(bill, model):
    return [(ln.count, ln.unit_USD, ln.basis, ln.date, ln.source) for ln in bill.lines if ln.model == model]


def _first(w, kind):
    return next(c for c in w.design.topology.components.values() if c.kind == kind)


def test_price_edit_changes_the_bill_by_the_difference_and_undo_restores_it(qtbot):
    w = open_window(qtbot)
    dpu = _first(w, "dpu")
    catalog_price = cost.price_book(w.design, w.catalog).part("dpu", dpu.model)
    assert catalog_price.USD == 2500 and catalog_price.basis != "component"
    before = cost.bill(w.design, w.catalog)
    (n, unit, basis, date, source), = _lines(before, dpu.model)
    assert unit == catalog_price.USD
    w.scene.select_ids([dpu.id])
    edit = w.inspector.editors["price_USD"]
    assert isinstance(edit, QLineEdit) and edit.text() == ""
    assert edit.placeholderText() == f"2,500 · {catalog_price.basis} {catalog_price.date}"
    assert w.inspector.editors["price_source"].placeholderText() == catalog_price.source
    steps = w.editor.stack.count()

    _type(qtbot, edit, "$1,800")
    assert w.design.topology.components[dpu.id].props["price_USD"] == 1800
    assert w.editor.stack.count() == steps + 1
    after = cost.bill(w.design, w.catalog)
    assert _lines(after, dpu.model) == [(n - 1, unit, basis, date, source),
                                        (1, 1800, "component", "", "the component's price_USD property")]
    assert before.capex_USD - after.capex_USD == 2500 - 1800
    assert after.by_basis()["component"] == 1800
    assert edit.text() == "1,800" and edit.property("label").font().bold()

    w.editor.stack.undo()
    assert "price_USD" not in w.design.topology.components[dpu.id].props
    assert cost.bill(w.design, w.catalog).capex_USD == before.capex_USD
    qtbot.waitUntil(lambda: edit.text() == "", timeout=1000)   # the inspector follows the model
    assert not edit.property("label").font().bold()


def test_price_date_and_source_save_and_load_with_the_design(qtbot, tmp_path):
    w = open_window(qtbot)
    nic = _first(w, "gpu_server")
    w.scene.select_ids([nic.id])
    _type(qtbot, w.inspector.editors["price_USD"], "1650.5")
    _type(qtbot, w.inspector.editors["price_date"], "2026-11")
    _type(qtbot, w.inspector.editors["price_source"], "quote Q-123 from the reseller")
    props = w.design.topology.components[nic.id].props
    assert props == {**nic.props, "price_USD": 1650.5, "price_date": "2026-11",
                     "price_source": "quote Q-123 from the reseller"}
    path = tmp_path / "priced.json"
    fileformat.save(w.design, path)
    loaded = fileformat.load(path)
    assert loaded.topology.components[nic.id].props == props
    rows = _lines(cost.bill(loaded, w.catalog), nic.model)
    assert rows[-1] == (1, 1650.5, "component", "2026-11", "quote Q-123 from the reseller")
    assert cost.bill(loaded, w.catalog).capex_USD == cost.bill(w.design, w.catalog).capex_USD
    # emptying the field gives the catalog price back (one more undo step)
    _type(qtbot, w.inspector.editors["price_USD"], "")
    assert "price_USD" not in w.design.topology.components[nic.id].props


@pytest.mark.parametrize("text, said", [("-5", "must be at least 0 USD"), ("cheap", "not a number")])
def test_a_bad_price_is_refused_with_a_message(qtbot, text, said):
    w = open_window(qtbot)
    sw = _first(w, "switch")
    w.scene.select_ids([sw.id])
    steps = w.editor.stack.count()
    messages = []
    w.editor.refused.connect(messages.append)
    edit = w.inspector.editors["price_USD"]
    _type(qtbot, edit, text)
    assert "price_USD" not in w.design.topology.components[sw.id].props
    assert w.editor.stack.count() == steps and edit.text() == ""
    assert len(messages) == 1 and messages[0].startswith("Price") and said in messages[0]


def test_site_figures_with_nothing_selected_are_one_undo_step_each_and_saved(qtbot, tmp_path):
    w = open_window(qtbot)
    w.scene.select_ids([])
    book = cost.price_book(w.design, w.catalog)
    packaged = book.site
    pue = w.inspector.editors["site:pue"]
    support = w.inspector.editors["site:support_fraction_per_year"]
    assert pue.text() == "" and pue.placeholderText() == f"{packaged['pue'].value:g}"
    assert support.placeholderText() == f"{100 * packaged['support_fraction_per_year'].value:g}"
    steps = w.editor.stack.count()
    _type(qtbot, pue, "1.5")
    _type(qtbot, support, "8")
    assert w.editor.stack.count() == steps + 2
    site = cost.site_of(book, w.design)
    assert site["pue"].value == 1.5 and site["pue"].basis == "design"
    assert site["support_fraction_per_year"].value == pytest.approx(0.08)
    assert w.design.meta["costs"]["site"] == {"pue": 1.5, "support_fraction_per_year": 0.08}
    path = tmp_path / "site.json"
    fileformat.save(w.design, path)
    assert cost.site_of(book, fileformat.load(path))["pue"].value == 1.5
    messages = []
    w.editor.refused.connect(messages.append)
    _type(qtbot, pue, "0.8")                       # below 1: refused, the design keeps 1.5
    assert messages and "PUE 0.8: must be at least 1" in messages[-1]
    assert w.design.meta["costs"]["site"]["pue"] == 1.5
    w.editor.stack.undo()
    w.editor.stack.undo()
    assert "costs" not in (w.design.meta or {})
    qtbot.waitUntil(lambda: pue.text() == "", timeout=1000)


def test_engine_results_say_how_much_of_the_capex_is_the_components_own(qtbot):
    from designer.engine.compare import compare
    from designer.gui.runview import cost_rows

    w = open_window(qtbot)
    sw = _first(w, "switch")
    w.scene.select_ids([sw.id])
    _type(qtbot, w.inspector.editors["price_USD"], "100000")
    c = cost.costs(w.design, w.catalog, compare(w.design, w.catalog))
    share = c.bill.by_basis()["component"] / c.bill.capex_USD
    note = next(r.label for r in cost_rows(c) if r.label.startswith("CapEx of which"))
    assert f"component {100 * share:.0f}%" in note


def test_number_text():
    assert parse_number(" $2,500 ") == 2500 and parse_number("1650.5 USD") == 1650.5
    assert parse_number("") is None
    with pytest.raises(ValueError, match="not a number"):
        parse_number("12abc")
    assert show_number(2500.0) == "2,500" and show_number(1234.5) == "1,234.5" and show_number(0) == "0"


def test_a_price_typed_for_several_components_sets_each_one_in_one_step(qtbot):
    w = open_window(qtbot)
    switches = [c.id for c in w.design.topology.components.values() if c.kind == "switch"][:2]
    before = cost.bill(w.design, w.catalog)
    w.scene.select_ids(switches)
    edit = w.inspector.editors["price_USD"]
    steps = w.editor.stack.count()
    _type(qtbot, edit, "90000")
    assert [w.design.topology.components[i].props["price_USD"] for i in switches] == [90000, 90000]
    assert w.editor.stack.count() == steps + 1
    model = w.design.topology.components[switches[0]].model
    after = cost.bill(w.design, w.catalog)
    unit = cost.price_book(w.design, w.catalog).part("switch", model).USD
    assert _lines(after, model)[-1][:3] == (2, 90000, "component")
    assert before.capex_USD - after.capex_USD == 2 * (unit - 90000)
    w.inspector.editors["price_USD"].property("reset").click()     # ↺: the catalog price again
    assert all("price_USD" not in w.design.topology.components[i].props for i in switches)
    assert cost.bill(w.design, w.catalog).capex_USD == before.capex_USD
