"""Issue 25: ``dpu-designer validate`` checks a design's own cost figures (``meta.costs``: the price
and site overrides): a figure that is negative, not a number, out of range or under an unknown key
is an error naming the key, one line each, never a traceback; a price of an unknown model a
warning; the loader already refuses non-finite numbers (one line, exit 2)."""

import json

import pytest

from designer.cli import main
from designer.topology import fileformat
from designer.topology.templates import leaf_spine


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "d.json"
    fileformat.save(leaf_spine(servers=4, storage="none"), p)
    return p


def _with_costs(path, costs):
    data = json.loads(path.read_text())
    data.setdefault("meta", {})["costs"] = costs
    path.write_text(json.dumps(data))


def test_good_cost_figures_pass(path, capsys):
    _with_costs(path, {"prices": {"nic:connectx-7": {"USD": 1650, "date": "2026-12", "source": "quote"},
                                  "cable:RJ45": 5, "transceiver:SR:400": 650},
                       "site": {"pue": 1.2, "lifetime_years": 6}})
    assert main(["validate", str(path)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


@pytest.mark.parametrize("costs, said", [
    ({"discount": 0.1}, "error: meta.costs.discount: unknown key (known: prices, site)"),
    ({"prices": {"nic:connectx-7": -5}}, "error: meta.costs.prices.nic:connectx-7: -5 is not a price"),
    ({"prices": {"nic:connectx-7": {"USD": "cheap"}}},
     "error: meta.costs.prices.nic:connectx-7.USD: 'cheap' is not a price"),
    ({"prices": {"nic:connectx-7": {"USD": 1, "vat": 0.2}}},
     "error: meta.costs.prices.nic:connectx-7.vat: unknown key (known: USD, date, source)"),
    ({"prices": {"gpu:h100-sxm": 30000}}, "error: meta.costs.prices.gpu:h100-sxm: unknown price key"),
    ({"site": {"pue": 0.5}}, "error: meta.costs.site.pue: 0.5: must be at least 1"),
    ({"site": {"support_fraction_per_year": -0.1}}, "error: meta.costs.site.support_fraction_per_year: -0.1"),
    ({"site": {"colour": 1}}, "error: meta.costs.site.colour: unknown key (known: lifetime_years"),
    ({"prices": {"switch:nosuch": 100}}, "warning: meta.costs.prices.switch:nosuch: no switch 'nosuch'"),
])
def test_bad_cost_figures_are_one_line_naming_the_key(path, capsys, costs, said):
    _with_costs(path, costs)
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert said in out and "Traceback" not in out + err
    assert code == (0 if said.startswith("warning") else 1)
    line = next(l for l in out.splitlines() if said in l)
    assert "(fix: " in line  # what, where, how to fix
    assert main(["validate", str(path), "--json"]) == code
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [p["code"] for p in problems] == ["costs"]


def test_a_non_finite_cost_figure_is_refused_by_the_loader_in_one_line(path, capsys):
    _with_costs(path, {"site": {"pue": float("nan")}})  # json.dumps writes NaN
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "meta.costs.site.pue" in err and len(err.strip().splitlines()) == 1
