"""Review findings on the CLI's streams and messages: stderr named as stderr (not stdout), a
closed stdout is an error, all-to-all's forced-algorithm message, validate's file name in JSON."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from designer import safeio
from designer.cli import main
from designer.paths import resources_dir

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(resources_dir() / "examples" / "example.json")


def test_stream_name_tells_stdout_from_stderr():
    assert safeio.stream_name("-") == "standard output"
    assert safeio.stream_name("/dev/stdout") == "standard output"
    assert safeio.stream_name("/dev/stderr") == "standard error"
    assert safeio.stream_name("out.csv") is None and safeio.stream_name(None) is None


def test_timeline_on_stderr_and_json_on_stdout_do_not_conflict(capsys):
    assert main(["run", EXAMPLE, "--timeline", "/dev/stderr", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "iteration_time_s" in json.loads(out)
    assert next(csv.reader(io.StringIO(err)))[:3] == ["t_s", "dt_s", "gpu_util"]


def test_timeline_on_stderr_is_named_standard_error_and_the_table_stays_on_stdout(capsys):
    assert main(["run", EXAMPLE, "--timeline", "/dev/stderr"]) == 0
    out, err = capsys.readouterr()
    assert "iteration time" in out and "rows written to standard error" in out
    assert "standard output" not in out and err.startswith("t_s,dt_s,gpu_util")


def test_export_to_both_streams_keeps_each_csv_clean(capsys):
    assert main(["export", EXAMPLE, "--cabling", "/dev/stderr", "--bom", "-"]) == 0
    out, err = capsys.readouterr()
    bom, cables = list(csv.reader(io.StringIO(out))), list(csv.reader(io.StringIO(err)))
    assert bom[0][:3] == ["category", "model", "name"] and cables[0][:3] == ["cable", "link", "from"]
    # no summary line ("standard output: N cables") inside either table: every row is a CSV row
    assert all(len(r) == len(bom[0]) for r in bom) and all(len(r) == len(cables[0]) for r in cables)


def test_export_to_stderr_says_standard_error_on_stdout(capsys, tmp_path):
    assert main(["export", EXAMPLE, "--cabling", "/dev/stderr", "--bom", str(tmp_path / "b.csv")]) == 0
    out, err = capsys.readouterr()
    n = len(list(csv.reader(io.StringIO(err)))) - 1
    assert f"standard error: {n} cables" in out and "standard output" not in out


def test_two_outputs_to_stderr_are_refused_naming_stderr(capsys):
    assert main(["export", EXAMPLE, "--cabling", "/dev/stderr", "--bom", "/dev/stderr"]) == 2
    assert "both name standard error" in capsys.readouterr().err


def test_closed_stdout_exits_1_with_one_line():
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    cmd = f'"{sys.executable}" -m designer validate "{EXAMPLE}" >&-'
    p = subprocess.run(["bash", "-c", cmd], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and "standard output is closed" in p.stderr


def test_forcing_a_ring_on_alltoall_says_it_is_no_ring_collective(capsys):
    assert main(["collective", EXAMPLE, "--op", "alltoall", "--algorithm", "ring", "--max", "1M"]) == 2
    err = capsys.readouterr().err
    assert "all-to-all is not a ring" in err and "use one of pairwise" in err
    assert "NVLink, PCIe or the network" not in err


def test_validate_json_names_stdin_as_the_text_does(monkeypatch, capsys):
    text = Path(EXAMPLE).read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    main(["validate", "-", "--json"])
    assert json.loads(capsys.readouterr().out)["file"] == "standard input"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    main(["validate", "-"])
    assert capsys.readouterr().out.splitlines()[-1].startswith("standard input:")
