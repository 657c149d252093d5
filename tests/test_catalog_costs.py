"""``dpu-designer catalog costs``: every cost figure the engine reads (models/costs), each with its
value, its kind (measured / datasheet / derived / assumed, from its source line) and its source."""

import json
import tomllib

from designer.cli import main
from designer.paths import models_dir
from designer.topology.catalog import figure_kind


def _toml(name):
    with open(models_dir() / "costs" / f"{name}.toml", "rb") as f:
        return tomllib.load(f)


def test_the_text_lists_each_host_figure_with_its_value_kind_and_source(capsys):
    assert main(["catalog", "costs"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("    ")}
    for name, entry in _toml("host_cpu").items():
        line = lines[name]
        assert figure_kind(entry["source"]) in line and entry["source"] in line
        assert f"{entry['value']:g}" in line.split()[1]
    # the figures this issue set: the per-packet ones are measurement-derived, the agents assumed
    assert "derived from a measurement, lower bound" in lines["tcp_cycles_per_packet"]
    assert " assumed " in lines["provisioning_agent_cores"]


def test_json_gives_each_figure_its_kind(capsys):
    assert main(["catalog", "costs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for name in ("host_cpu", "dpu", "storage", "jitter"):
        table = _toml(name)
        assert set(data[name]) == {k for k, v in table.items() if isinstance(v, dict) and "value" in v}
        for k, f in data[name].items():
            assert f["value"] == table[k]["value"] and f["kind"] == figure_kind(table[k]["source"])
    # no figure of the files this engine owns is left without a kind
    assert not [k for n in ("host_cpu", "dpu", "storage", "jitter") for k, f in data[n].items()
                if f["kind"] in ("unmarked", "no source")]
