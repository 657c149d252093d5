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
