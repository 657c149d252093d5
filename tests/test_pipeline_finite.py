"""NaN and infinity are refused where the engine makes them (issue 23: "NaN/inf results printed
with exit 0"): an extreme input gives one line naming the figure and its inputs, exit 2."""

from __future__ import annotations

import json
import math

import pytest

from designer.cli import main
from designer.engine import pipeline
from designer.errors import UsageError
from designer.paths import resources_dir
from designer.topology import fileformat
from designer.topology.catalog import load_catalog

CAT = load_catalog()
EXAMPLE = resources_dir() / "examples" / "example.json"


def _finite(x) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(map(_finite, x.values()))
    if isinstance(x, list):
        return all(map(_finite, x))
    return True


def test_a_vanishing_tflops_rate_is_refused_naming_the_training_time():
    design = fileformat.load(EXAMPLE)
    with pytest.raises(UsageError, match=r"the training time came out as inf from .* tokens at 4.94066e-324 TFLOP/s"):
        pipeline.run(design, CAT, tflops_per_gpu=5e-324)


def test_the_cli_says_it_in_one_line_with_exit_2(capsys):
    code = main(["run", str(EXAMPLE), "--tflops-per-gpu", "5e-324"])
    out, err = capsys.readouterr()
    assert code == 2 and "inf days" not in out and err.count("\n") == 1 and "training time" in err


@pytest.mark.parametrize("overrides", [{"tokens": 1e308}, {"seq_len": 2**40}, {"tokens": 5e-324},
                                       {"global_batch": 2**62}])
def test_extreme_but_finite_inputs_give_finite_figures_or_a_refusal(overrides):
    design = fileformat.load(EXAMPLE)
    try:
        result = pipeline.run(design, CAT, **overrides)
    except UsageError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    data = result.to_json()
    assert _finite(data), json.dumps(data)[:300]
