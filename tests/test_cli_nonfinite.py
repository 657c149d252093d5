"""A result with a figure that is not a finite number (NaN, inf) is not printed as a result: the
command exits 1 with one line naming the figure (issue 23; before, ``run --tflops-per-gpu 1e-300``
printed ``training time inf days`` and exited 0)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from designer.cli import main
from designer.commands import run as run_cmd
from designer.errors import ResultError
from designer.paths import resources_dir

EXAMPLE = str(resources_dir() / "examples" / "example.json")


@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["table", "json"])
def test_an_input_that_overflows_the_training_time_is_refused_naming_it(extra, capsys):
    """The engine refuses it where the infinity is made (``pipeline``): bad input, exit 2, one line
    naming the inputs; the exit-1 check below is the backstop for a figure that slips through."""
    assert main(["run", EXAMPLE, "--tflops-per-gpu", "1e-300", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: the training time came out as inf") and "tflops_per_gpu" in err
    assert err.count("\n") == 1


def _nan_in(part: str):
    """The engine's run, with one figure of its result made NaN (as an engine bug would)."""
    from designer.engine import pipeline

    real = pipeline.run

    def run(*args, **kwargs):
        result = real(*args, **kwargs)
        if part == "breakdown":
            result.breakdown_s["data_stall"] = math.nan
        elif part == "collective":
            result.collectives[0] = dataclasses.replace(result.collectives[0], time_s=math.inf)
        elif part == "link":
            result.links.utilization[3] = math.nan
        elif part == "host_cpu":
            result.host_cpu["by_task"]["network"] = math.nan
        return result

    return run


@pytest.mark.parametrize("part, name", [("breakdown", "breakdown_s.data_stall"),
                                        ("collective", "collectives[0].time_s"),
                                        ("link", "links.utilization (1 links)"),
                                        ("host_cpu", "host_cpu.by_task.network")])
def test_every_kind_of_figure_is_checked(part, name, monkeypatch, capsys):
    from designer.engine import pipeline

    monkeypatch.setattr(pipeline, "run", _nan_in(part))
    assert main(["run", EXAMPLE, "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and f"for {name}" in err


def test_nonfinite_figures_names_paths():
    data = {"a": 1.0, "b": {"c": math.nan, "d": [0.0, math.inf, {"e": -math.inf}]}, "f": "nan", "g": None}
    assert run_cmd.nonfinite_figures(data) == ["b.c", "b.d[1]", "b.d[2].e"]
    assert run_cmd.nonfinite_figures({"x": 1, "y": [1, 2]}) == []


def test_a_sound_result_passes(capsys):
    assert main(["run", EXAMPLE, "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_the_check_raises_result_error_with_many_names_shortened():
    class R:
        pass

    r = R()
    for name in run_cmd._RESULT_FIGURES:
        setattr(r, name, None)
    r.breakdown_s = {f"p{i}": math.nan for i in range(8)}
    r.links = []
    with pytest.raises(ResultError, match=r"breakdown_s.p0, .*breakdown_s.p4 and 3 more"):
        run_cmd.check_finite(r)


def test_a_huge_but_finite_training_time_is_a_readable_number(capsys):
    """--tokens 1e308: finite, exit 0, written in powers of ten (before: a 300-digit number)."""
    assert main(["run", EXAMPLE, "--tokens", "1e308"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("training time"))
    assert "e+3" in line and "days" in line and len(line) < 80
