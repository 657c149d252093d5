"""The CLI conventions of issue 23 in ``new``, ``plan`` and ``compare``: a result figure that is not
a finite number is refused in one line (exit 1); design text is printed as one line
(``designer.console.shown``); ``-o -`` writes the design to standard output and the command's own
lines to standard error; the installed package data hold every resource file."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest

from designer.cli import main
from designer.paths import resources_dir
from designer.topology import fileformat

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PATH = resources_dir() / "examples" / "example.json"
EXAMPLE = str(EXAMPLE_PATH)
FORGED = "\nerror: FORGED"


def _broken_engine(monkeypatch, how: str):
    """``pipeline.run`` (which ``compare`` and the plan's engine runs call) with one figure of
    each result made NaN or infinite, as an engine bug would."""
    from designer.engine import pipeline

    real = pipeline.run

    def run(*args, **kwargs):
        result = real(*args, **kwargs)
        if how == "iteration":
            result.iteration_time_s = math.nan
        elif how == "breakdown":
            result.breakdown_s["data_stall"] = math.inf
        elif how == "text":  # an engine message carrying design text with a line break
            result.warnings.append(f"workload wl{FORGED} is odd")
            result.bottlenecks.insert(0, f"link sw{FORGED} is busy")
        return result

    monkeypatch.setattr(pipeline, "run", run)


def _hostile(tmp_path: Path) -> Path:
    """The example design with a line break in its name and its workload's name."""
    d = json.loads(EXAMPLE_PATH.read_text())
    d["name"] = "design" + FORGED
    d["workload"]["name"] = "wl" + FORGED
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(d))
    return path


def _no_forged_line(text: str) -> None:
    lines = text.splitlines()
    assert lines, "nothing printed"
    assert not any(line.startswith("error: FORGED") for line in lines), text


# ------------------------------------------------------------------------ non-finite results
@pytest.mark.parametrize("how, figure", [("iteration", "for iteration_time_s"),
                                         ("breakdown", "for breakdown_s.data_stall")])
@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["table", "json"])
def test_compare_refuses_a_nonfinite_figure_in_one_line(how, figure, extra, monkeypatch, capsys):
    _broken_engine(monkeypatch, how)
    assert main(["compare", EXAMPLE, *extra]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: host-managed run: ") and figure in err


@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["table", "json"])
def test_plan_refuses_a_nonfinite_figure_in_one_line_and_saves_nothing(extra, monkeypatch, capsys, tmp_path):
    _broken_engine(monkeypatch, "breakdown")
    out_file = tmp_path / "best.json"
    assert main(["plan", EXAMPLE, "--top", "2", "--evaluate", "2", "--workers", "1", "-o", str(out_file), *extra]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: layout tp") and "for breakdown_s.data_stall" in err
    assert not out_file.exists()


def test_plan_refuses_a_nan_iteration_time(monkeypatch, capsys):
    _broken_engine(monkeypatch, "iteration")
    assert main(["plan", EXAMPLE, "--top", "2", "--evaluate", "2", "--workers", "1"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "for iteration_time_s" in err


def test_sound_results_still_print(capsys):
    assert main(["compare", EXAMPLE]) == 0
    out, err = capsys.readouterr()
    assert "iteration time (s)" in out and err == ""


# ------------------------------------------------------------------- design text, one line
def test_plan_prints_a_workload_name_with_a_line_break_as_one_line(tmp_path, capsys):
    assert main(["plan", str(_hostile(tmp_path)), "--top", "2", "--evaluate", "2"]) == 0
    out, err = capsys.readouterr()
    _no_forged_line(out + err)
    assert out.splitlines()[0].startswith("plan      wl\\u000aerror: FORGED on ")


def test_plan_saved_line_names_a_path_with_a_line_break_on_one_line(tmp_path, capsys):
    target = tmp_path / f"best{FORGED}.json"
    assert main(["plan", EXAMPLE, "--top", "2", "--evaluate", "2", "-o", str(target)]) == 0
    out, _ = capsys.readouterr()
    _no_forged_line(out)
    saved = [line for line in out.splitlines() if line.startswith("saved ")]
    assert len(saved) == 1 and saved[0].endswith("best\\u000aerror: FORGED.json")
    assert fileformat.load(target).workload["preset"] == "llama3-8b"


def test_compare_prints_engine_messages_with_a_line_break_as_one_line(tmp_path, monkeypatch, capsys):
    _broken_engine(monkeypatch, "text")
    assert main(["compare", str(_hostile(tmp_path))]) == 0
    out, err = capsys.readouterr()
    _no_forged_line(out + err)
    warned = [line for line in out.splitlines() if line.startswith("warning (host-managed): workload wl")]
    assert warned == ["warning (host-managed): workload wl\\u000aerror: FORGED is odd"]
    assert "  1. link sw\\u000aerror: FORGED is busy" in out.splitlines()


def test_new_prints_an_output_path_with_a_line_break_as_one_line(tmp_path, capsys):
    target = tmp_path / f"made{FORGED}.json"
    assert main(["new", "--template", "leaf-spine", "--servers", "2", "-o", str(target)]) == 0
    out, err = capsys.readouterr()
    _no_forged_line(out + err)
    wrote = out.splitlines()[0]
    assert wrote.startswith("wrote ") and "made\\u000aerror: FORGED.json: 2 servers" in wrote
    assert len(fileformat.load(target).topology.servers()) == 2


# --------------------------------------------------------------------- -o -: design on stdout
def test_new_dash_writes_the_design_to_stdout_and_its_lines_to_stderr(capsys):
    assert main(["new", "--template", "leaf-spine", "--servers", "2", "-o", "-"]) == 0
    out, err = capsys.readouterr()
    design = fileformat.loads(out, source="<stdout>")  # stdout is the design and nothing else
    assert len(design.topology.servers()) == 2
    assert err.startswith("wrote standard output: 2 servers") and "workload " in err
    assert not Path("-").exists()


def test_plan_dash_writes_the_design_to_stdout_and_the_table_to_stderr(capsys):
    assert main(["plan", EXAMPLE, "--top", "2", "--evaluate", "2", "-o", "-"]) == 0
    out, err = capsys.readouterr()
    design = fileformat.loads(out, source="<stdout>")
    assert err.startswith("plan      Llama 3 8B on 64 GPUs")
    saved = err.splitlines()[-1]
    assert saved.startswith("saved ") and saved.endswith(" to standard output")
    assert saved[len("saved "):-len(" to standard output")] in err.split("best      ", 1)[1].split(":")[0]
    assert design.workload != fileformat.load(EXAMPLE).workload  # the best layout, not the design's
    assert not Path("-").exists()


def test_plan_dash_with_json_is_refused_before_the_search(monkeypatch, capsys):
    from designer.services import planning

    monkeypatch.setattr(planning, "search", lambda *a, **k: pytest.fail("searched"))
    assert main(["plan", EXAMPLE, "-o", "-", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "both write to standard output" in err


# ----------------------------------------------------------------------------- package data
def _package_data_misses(folder: Path, patterns: list[str]) -> list[str]:
    """Files under ``folder`` that none of the package-data ``patterns`` match. setuptools expands
    each pattern as a recursive glob relative to the package folder (``**/`` any number of
    folders, none included), as ``Path.glob`` does; Python modules are installed as the package's
    modules and bytecode caches are not data."""
    covered = {path for pattern in patterns for path in folder.glob(pattern)}
    return [path.relative_to(folder).as_posix() for path in sorted(folder.rglob("*"))
            if path.is_file() and path not in covered and "__pycache__" not in path.parts
            and path.suffix not in (".py", ".pyc")]


@pytest.mark.parametrize("package, folder", [("designer._resources", "resources"),
                                             ("designer._models", "models")])
def test_package_data_patterns_cover_every_file(package, folder):
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["package-dir"][package] == folder
    missing = _package_data_misses(ROOT / folder, tool["package-data"][package])
    assert missing == [], (f"pyproject.toml [tool.setuptools.package-data] {package!r} leaves out "
                           f"{missing}: add a pattern for their kind of file")


def test_the_coverage_check_finds_a_file_left_out(tmp_path):
    (tmp_path / "icons").mkdir()
    (tmp_path / "icons" / "a.png").write_bytes(b"")
    (tmp_path / "top.png").write_bytes(b"")
    (tmp_path / "app.desktop").write_text("")
    (tmp_path / "__init__.py").write_text("")
    assert _package_data_misses(tmp_path, ["**/*.png"]) == ["app.desktop"]
    assert _package_data_misses(tmp_path, ["**/*.png", "**/*.desktop"]) == []
    assert "dpu-designer.desktop" in {p.name for p in (ROOT / "resources").iterdir()}


def test_plan_apply_on_stdin_is_a_filter_design_out_table_on_stderr(monkeypatch, capsys):
    import io
    import sys

    stdin = io.TextIOWrapper(io.BytesIO(EXAMPLE_PATH.read_bytes()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["plan", "-", "--apply", "--top", "2", "--evaluate", "2"]) == 0
    out, err = capsys.readouterr()
    design = fileformat.loads(out, source="<stdout>")
    assert design.workload != fileformat.load(EXAMPLE).workload
    assert err.startswith("plan      ") and err.splitlines()[-1].endswith(" to standard output")


def test_plan_apply_on_stdin_with_json_is_refused(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE_PATH.read_bytes())))
    assert main(["plan", "-", "--apply", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--apply on - and --json both write" in err
