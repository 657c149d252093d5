"""``dpu-designer validate --json`` (issue 23): one JSON object with the counts and a stable list
of problems (severity, code, message, hint, component, link); same exit codes as the lines."""

from __future__ import annotations

import json

from designer.cli import main
from designer.commands.validate import PROBLEM_FIELDS
from designer.paths import resources_dir
from designer.topology import fileformat
from designer.topology.validation import validate

EXAMPLE = str(resources_dir() / "examples" / "example.json")


def _broken(tmp_path, capsys) -> str:
    path = tmp_path / "x.json"
    main(["new", "--template", "leaf-spine", "--servers", "2", "--storage", "none", "-o", str(path)])
    data = json.loads(path.read_text())
    data["links"] = data["links"][1:]  # one NIC loses its cable (a warning)
    data["links"][0]["speed_Gbps"] = 800.0  # faster than both 400 Gb/s ends (two errors)
    path.write_text(json.dumps(data))
    capsys.readouterr()
    return str(path)


def test_problems_as_json_with_every_field(tmp_path, capsys):
    path = _broken(tmp_path, capsys)
    assert main(["validate", path, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["file", "components", "links", "errors", "warnings", "problems"]
    assert out["file"] == path and out["errors"] == 2
    assert out["warnings"] == len(out["problems"]) - 2
    expected = validate(fileformat.load(path))
    assert len(out["problems"]) == len(expected)
    for got, problem in zip(out["problems"], expected):
        assert tuple(got) == PROBLEM_FIELDS == ("severity", "code", "message", "hint", "component", "link")
        assert got["severity"] in ("error", "warning") and got["code"] and got["message"]
        assert got["code"] == problem.code and got["message"] == problem.message
        assert got["component"] == (problem.component or None) and got["link"] == (problem.link or None)
    speed = [p for p in out["problems"] if "800 Gb/s link" in p["message"]]
    assert len(speed) == 2 and all(p["severity"] == "error" and p["link"] for p in speed)


def test_the_lines_and_the_json_say_the_same(tmp_path, capsys):
    path = _broken(tmp_path, capsys)
    main(["validate", path])
    lines = capsys.readouterr().out.splitlines()[:-1]
    main(["validate", path, "--json"])
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert len(lines) == len(problems)
    for line, p in zip(lines, problems):
        assert line.startswith(f"{p['severity']}: ") and p["message"] in line


def test_a_sound_design_is_an_empty_list_and_exit_0(capsys):
    assert main(["validate", EXAMPLE, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["problems"] == [] and out["errors"] == out["warnings"] == 0 and out["components"] == 97


def test_an_unreadable_file_is_still_one_error_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["validate", str(bad), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1
