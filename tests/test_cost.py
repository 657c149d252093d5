"""Prices, the priced bill, TCO and payback (designer.services.cost) and `dpu-designer cost`."""

import json
import math
import tomllib

import pytest

from designer import cli
from designer.paths import models_dir, resources_dir
from designer.services.cabling import cables
from designer.services import cost
from designer.topology import fileformat
from designer.topology.catalog import load_catalog

EXAMPLE = resources_dir() / "examples" / "example.json"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture()
def design():
    return fileformat.load(EXAMPLE)


def test_every_packaged_price_has_basis_date_and_source():
    table = tomllib.loads((models_dir() / "costs" / "prices.toml").read_text())
    assert table["currency"] == "USD"
    rows = table["price"]
    assert len(rows) > 20
    for row in rows:
        assert row["basis"] in ("list", "street", "derived", "measured", "assumed"), row
        assert row["date"] and row["source"], row
        assert isinstance(row["USD"], (int, float)) and row["USD"] >= 0, row
        if row["basis"] == "assumed":
            assert row["source"].startswith("assumed"), row  # printed as an assumption
    for name, fig in table["site"].items():
        assert fig["basis"] and fig["date"] and fig["source"], name


def test_every_catalog_part_has_a_price(catalog):
    book = cost.PriceBook(catalog)
    for kind, ckind in (("gpu_server", "server"), ("dpu", "dpu"), ("nic", "nic"), ("switch", "switch"),
                        ("storage", "storage"), ("rack", "rack")):
        for model in catalog.ids(ckind):
            assert book.part(kind, model).USD is not None, (kind, model)


def test_bill_total_is_the_sum_of_its_lines(design, catalog):
    b = cost.bill(design, catalog)
    assert b.lines and not b.missing
    for line in b.lines:
        assert line.total_USD == pytest.approx(line.count * line.unit_USD)
    assert b.capex_USD == pytest.approx(sum(line.total_USD for line in b.lines))
    assert sum(b.by_basis().values()) == pytest.approx(b.capex_USD)


def test_bill_counts_the_cables_the_cabling_plan_lists(design, catalog):
    b = cost.bill(design, catalog)
    assert sum(line.count for line in b.lines if line.category == "Cables") == sum(1 for _ in cables(design, catalog))


def test_a_component_price_beats_the_design_price_which_beats_the_table(design, catalog):
    book = cost.price_book(design, catalog)
    base = cost.bill(design, catalog, book)
    n = next(line.count for line in base.lines if line.model == "bluefield-3")
    design.meta = {"costs": {"prices": {"dpu:bluefield-3": {"USD": 1000, "date": "2026-12", "source": "quote"}}}}
    cheaper = cost.bill(design, catalog)
    assert base.capex_USD - cheaper.capex_USD == pytest.approx(n * (2500 - 1000))
    one = next(c for c in design.topology.components.values() if c.model == "bluefield-3")
    one.props.update(price_USD=0, price_date="2026-11", price_source="a demo unit, free")
    mixed = cost.bill(design, catalog)
    assert cheaper.capex_USD - mixed.capex_USD == pytest.approx(1000)
    # the component with its own price is a line of its own, with its basis, date and source
    rows = [(ln.count, ln.unit_USD, ln.basis, ln.date, ln.source) for ln in mixed.lines if ln.model == "bluefield-3"]
    assert rows == [(n - 1, 1000, "design", "2026-12", "quote"), (1, 0, "component", "2026-11", "a demo unit, free")]
    assert "component" not in mixed.by_basis()  # a free part adds nothing to the CapEx


def test_tco_is_its_parts(catalog):
    site = cost.site_of(cost.PriceBook(catalog), pue=1.25, price_per_kWh=0.1, lifetime_years=4,
                        space_USD_per_kW_month=150, support_fraction_per_year=0.05)
    t = cost.tco(1_000_000.0, load_kW=100.0, nameplate_kW=120.0, site=site)
    energy = 100.0 * 8766 * 1.25 * 0.1
    space = 120.0 * 150 * 12
    support = 0.05 * 1_000_000
    assert t.energy_USD_per_year == pytest.approx(energy)
    assert t.space_USD_per_year == pytest.approx(space)
    assert t.support_USD_per_year == pytest.approx(support)
    assert t.total_USD == pytest.approx(1_000_000 + 4 * (energy + space + support))
    assert t.per_year_USD * 4 == pytest.approx(t.total_USD)
    assert t.per_hour_USD == pytest.approx(t.total_USD / (4 * 8766))


def test_modes_buy_drawn_dpus_as_nics_in_host_runs(design, catalog):
    from designer.engine.compare import compare

    cmp = compare(design, catalog)
    c = cost.costs(design, catalog, cmp)
    drawn = c.bill
    n = next(line.count for line in drawn.lines if line.model == "bluefield-3")
    assert c.modes["dpu"].capex_USD == pytest.approx(drawn.capex_USD)
    assert drawn.capex_USD - c.modes["host"].capex_USD == pytest.approx(n * (2500 - 1500))
    m = c.modes["host"]
    assert m.per_kW == pytest.approx(cmp.runs["host"].tokens_per_s / (cmp.runs["host"].power_W["total"] / 1e3))
    assert m.run_cost_USD == pytest.approx(cmp.runs["host"].training_time_days * 24 * m.tco.per_hour_USD)
    assert m.per_USD == pytest.approx(m.tokens_per_s * 3600 / m.tco.per_hour_USD)


def _mode(name, capex, days, per_hour):
    t = cost.Tco(capex, 5, capex / 5, 0.0, 0.0, 0.0)
    scale = per_hour / t.per_hour_USD  # a Tco whose rate is per_hour
    t = cost.Tco(capex * scale, 5, capex * scale / 5, 0.0, 0.0, 0.0)
    return cost.ModeCost(name, capex, t, 1.0, 1.0, "tokens", days)


class _R:
    def __init__(self, infra):
        self.host_cpu = {"infra_fraction": infra, "cores_total": 100}


def test_payback_days_from_the_time_freed():
    a, b = _mode("smartnic", 1_000_000, 100.0, 50.0), _mode("dpu", 1_012_000, 90.0, 50.0)
    p = cost.payback(a, b, _R(0.2), _R(0.05), servers=4)
    assert p.time_freed_fraction == pytest.approx(0.1)
    assert p.days == pytest.approx(12_000 / (0.1 * 50.0 * 24))
    assert p.extra_per_server_USD == pytest.approx(3000)
    assert p.host_cores_freed == pytest.approx((0.2 - 0.05) * 100 / 4)
    slower = cost.payback(a, _mode("dpu", 1_012_000, 101.0, 50.0), _R(0.2), _R(0.05), servers=4)
    assert slower.days is None and "never pays back" in slower.text({})


def test_cli_cost_json_csv_and_save(tmp_path, capsys):
    f = tmp_path / "d.json"
    f.write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / "bill.csv"
    assert cli.main(["cost", str(f), "--json", "--csv", str(out), "--price", "switch:qm9700=90000",
                     "--pue", "1.3", "--save"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["site"]["pue"]["value"] == 1.3
    line = next(x for x in data["bill"] if x["model"] == "qm9700")
    assert line["unit_USD"] == 90000 and line["basis"] == "design"
    assert data["capex_USD"] == pytest.approx(sum(x["total_USD"] for x in data["bill"]))
    saved = fileformat.load(f)
    assert saved.meta["costs"]["prices"]["switch:qm9700"]["USD"] == 90000
    assert saved.meta["costs"]["site"]["pue"] == 1.3
    text = out.read_text()
    assert text.splitlines()[0].startswith("category,model,name,count,unit_USD,total_USD,basis")
    assert cli.main(["cost", str(f)]) == 0  # the saved prices are used without --price
    assert "$90,000" in capsys.readouterr().out


def test_cli_cost_refuses_bad_prices(capsys):
    assert cli.main(["cost", str(EXAMPLE), "--price", "connectx-7=12"]) == 2
    assert "KIND:MODEL=USD" in capsys.readouterr().err
    assert cli.main(["cost", str(EXAMPLE), "--price", "nic:connectx-7=-5"]) == 2
    assert cli.main(["cost", str(EXAMPLE), "--pue", "nan"]) == 2


def test_the_priced_bill_csv_quotes_cells_a_spreadsheet_would_run(tmp_path, capsys):
    f = tmp_path / "d.json"
    d = fileformat.load(EXAMPLE)
    d.meta = {"costs": {"prices": {"dpu:bluefield-3": {"USD": 1, "source": "=HYPERLINK(\"x\")"}}}}
    fileformat.save(d, f)
    out = tmp_path / "bill.csv"
    assert cli.main(["cost", str(f), "--csv", str(out)]) == 0
    import csv as _csv
    rows = list(_csv.reader(out.open()))
    cell = next(r for r in rows if r[1] == "bluefield-3")[-1]
    assert cell.startswith("'=HYPERLINK")


def test_the_basis_share_says_less_than_one_percent_for_a_small_nonzero_part(design, catalog):
    one = next(c for c in design.topology.components.values() if c.kind == "rack")
    design.topology.set_prop(one.id, "price_USD", 1000.0)
    b = cost.bill(design, catalog)
    text = cost.basis_share_text(b)
    assert 0 < b.by_basis()["component"] / b.capex_USD < 0.005
    assert text.startswith("of which ") and text.endswith("component <1%") or "component <1%," in text
    shares = [float(p.split()[-1].rstrip("%")) for p in text[len("of which "):].split(", ") if "<1" not in p]
    assert sum(shares) == pytest.approx(100, abs=len(shares))   # each rounded to a whole per cent


@pytest.mark.parametrize("costs, said", [
    ({"prices": {"dpu:bluefield-3": {"USD": -3}}},
     "meta.costs.prices.dpu:bluefield-3: USD -3 is not a price (a number of 0 or more); set it with "
     "dpu-designer cost FILE --price dpu:bluefield-3=USD --save"),
    ({"site": {"pue": 0.5}}, "meta.costs.site.pue = 0.5: must be at least 1 (facility power over IT power)"),
    ({"site": {"lifetime_years": "five"}}, "meta.costs.site.lifetime_years = 'five': must be a number"),
])
def test_a_bad_saved_cost_figure_is_one_line_naming_it(tmp_path, capsys, costs, said):
    d = fileformat.load(EXAMPLE)
    d.meta = {**(d.meta or {}), "costs": costs}
    path = tmp_path / "bad.json"
    fileformat.save(d, path)
    assert cli.main(["cost", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("option, said", [("--pue=0.9", "--pue 0.9: must be at least 1"),
                                          ("--lifetime-years=0", "--lifetime-years 0: must be more than 0 years"),
                                          ("--support-pct=150", "--support-pct 150: must be 0 to 100")])
def test_out_of_range_site_options_are_refused(capsys, option, said):
    assert cli.main(["cost", str(EXAMPLE), option]) == 2
    assert said in capsys.readouterr().err
