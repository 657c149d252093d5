"""A buyer's engineer's review of the CLI, the app and the report (h9/ux): each finding with the
behaviour that fixes it."""

from __future__ import annotations

import pytest

from designer.cli import main
from designer.paths import resources_dir

EXAMPLE = str(resources_dir() / "examples" / "example.json")


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, flag", [
    (["cost", EXAMPLE, "--support-pct", "abc"], "--support-pct"),
    (["cost", EXAMPLE, "--pue", "abc"], "--pue"),
    (["cost", EXAMPLE, "--lifetime-years", "-3"], "--lifetime-years"),
    (["cost", EXAMPLE, "--price", "nic:connectx-7=abc"], "--price"),
    (["run", EXAMPLE, "--tp", "abc"], "--tp"),
    (["run", EXAMPLE, "--tokens", "-1"], "--tokens"),
    (["run", EXAMPLE, "--tflops-per-gpu", "x"], "--tflops-per-gpu"),
    (["plan", EXAMPLE, "--top", "x"], "--top"),
    (["collective", EXAMPLE, "--gpus", "x"], "--gpus"),
    (["collective", EXAMPLE, "--min", "abc"], "--min"),
    (["collective", EXAMPLE, "--max", "abc"], "--max"),
])
def test_a_bad_number_names_its_flag(capsys, argv, flag):
    line = _error(capsys, argv)
    assert flag in line, line


def test_payback_beyond_the_lifetime_says_so_instead_of_a_count_of_days():
    from designer.services.cost import Payback

    slow = Payback("host", "dpu", 80_000.0, 10_000.0, 2e-6, 1_466_067.0, 3.1)
    text = slow.text({"host": "host-managed", "dpu": "DPU-offloaded"}, lifetime_years=5)
    assert "does not pay back on GPU time within the 5-year lifetime" in text
    assert "days" not in text and "0.00%" not in text and "<0.01%" in text
    quick = Payback("host", "dpu", 80_000.0, 10_000.0, 0.05, 400.0, 3.1)
    assert "paid back after 400 days of training" in quick.text({}, lifetime_years=5)


def test_cost_prints_no_payback_longer_than_the_lifetime(capsys):
    assert main(["cost", EXAMPLE]) == 0
    out = capsys.readouterr().out
    backs = out[out.index("payback of the adapters"):]
    assert "1,466,067 days" not in backs and "within the 5-year lifetime" in backs


_INTERNAL = ("tp_comm", "pp_comm", "dp_exposed", "host_cpu_slowdown", "dpu_slowdown", "data_stall",
             "adapter arm engine", "adapter crypto engine", "adapter line engine", "adapter dram engine")


@pytest.mark.parametrize("command", ["run", "compare"])
def test_cli_tables_name_the_parts_as_the_app_does(capsys, command):
    from designer.services.style import PART_LABEL

    assert main([command, EXAMPLE]) == 0
    out = capsys.readouterr().out
    table = out[:out.index("bottlenecks")]
    assert not [w for w in _INTERNAL if w in table], table
    for label in ("Compute", "TP communication", "Stragglers", "Checkpoints"):
        assert f"  {label} " in table and label == PART_LABEL[{"Compute": "compute", "TP communication": "tp_comm",
                                                              "Stragglers": "straggler", "Checkpoints": "checkpoint"}[label]]
    if command == "compare":
        assert "Crypto engine (inline encryption) load" in table


def test_sweep_table_names_the_modes_and_prints_days_at_their_one_precision(capsys):
    assert main(["sweep", EXAMPLE, "--param", "global_batch", "--values", "512", "--workers", "1"]) == 0
    head, row = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()][:2]
    assert "smartnic" not in head and "dpu " not in head and "host days" not in head
    assert "SmartNIC days" in head and "DPU days" in head and "Host days" in head
    days = row.split()[1]
    assert days.count(".") == 1 and len(days.split(".")[1]) == 1, row  # ,.1f as run and the app
