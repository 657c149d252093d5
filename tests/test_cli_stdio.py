"""CLI conventions (issue 23): ``-`` is standard output for every file a command writes and
standard input for a design it reads; ``/dev/stdout`` is allowed (what safeio refuses otherwise
stays refused); ``python -m designer``; the desktop entry and its gui-scripts program."""

from __future__ import annotations

import configparser
import csv
import io
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from designer import safeio
from designer.cli import main
from designer.errors import UsageError
from designer.paths import resources_dir

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(resources_dir() / "examples" / "example.json")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")


def program(*args: str, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "designer", *args], env=_env(), cwd=ROOT, timeout=180, **kw)


# ------------------------------------------------------------------------------------ outputs
def test_timeline_dash_is_the_csv_on_stdout_and_the_table_on_stderr(capsys, tmp_path):
    assert main(["run", EXAMPLE, "--timeline", "-"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:3] == ["t_s", "dt_s", "gpu_util"] and len(rows) > 100
    assert "iteration time" in err and "rows written to standard output" in err
    assert not (tmp_path / "-").exists() and not Path("-").exists()


def test_timeline_dash_with_json_is_refused_before_the_engine_runs(capsys):
    assert main(["run", EXAMPLE, "--timeline", "-", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "both write to standard output" in err


def test_export_dash_writes_the_table_to_stdout_and_the_summary_to_stderr(capsys, tmp_path):
    assert main(["export", EXAMPLE, "--cabling", "-", "--bom", str(tmp_path / "bom.csv")]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:3] == ["cable", "link", "from"]
    assert f"standard output: {len(rows) - 1} cables" in err
    assert (tmp_path / "bom.csv").read_text().startswith("category,model,name,count")


def test_two_outputs_to_stdout_are_refused(capsys):
    assert main(["export", EXAMPLE, "--cabling", "-", "--bom", "/dev/stdout"]) == 2
    assert "both name standard output" in capsys.readouterr().err


def test_elevation_to_stdout_asks_for_a_file_name(capsys):
    assert main(["export", EXAMPLE, "--elevation", "-"]) == 2
    assert "give a file name ending .svg or .png" in capsys.readouterr().err


def test_report_pdf_to_a_pipe(tmp_path):
    done = program("report", EXAMPLE, "-o", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"%PDF-") and done.stdout.rstrip().endswith(b"%%EOF")
    assert b"standard output:" in done.stderr and b"pages" in done.stderr


def test_dev_stdout_is_allowed_when_stdout_is_a_pipe():
    done = program("export", EXAMPLE, "--cabling", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"cable,link,from")
    assert b"cables" in done.stderr


def test_binary_output_is_refused_on_a_terminal():
    """A PDF is not written to a terminal (``report -o -`` with stdout a tty): exit 2, one line."""
    master, slave = os.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "designer", "report", EXAMPLE, "-o", "-"], env=_env(),
                              cwd=ROOT, stdout=slave, stderr=subprocess.PIPE, timeout=180)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 2
    assert b"binary data" in done.stderr and b"Traceback" not in done.stderr


def test_console_target_names():
    for name in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        assert safeio.console_target(name) == 1
    assert safeio.console_target("/dev/stderr") == 2
    assert safeio.check_output_path("-") == safeio.STDOUT == safeio.check_output_path("/dev/stdout")


def test_what_safeio_refuses_stays_refused(tmp_path):
    """/dev/null (when it is not stdout), a FIFO, a folder: refused as before."""
    with pytest.raises(UsageError, match="is a device"):
        safeio.check_output_path("/dev/null")
    with pytest.raises(UsageError, match="is a folder"):
        safeio.check_output_path(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UsageError, match="pipe"):
        safeio.check_output_path(tmp_path / "fifo")


def test_a_stream_redirected_to_a_file_is_written_through_the_stream(tmp_path):
    """``> out.txt`` and ``-o /dev/stdout``: the bytes go through the descriptor (appended after
    what the command printed before), the file is not replaced behind the shell's back."""
    out = tmp_path / "out.csv"
    with open(out, "wb") as fh:
        done = program("export", EXAMPLE, "--cabling", "/dev/stdout", stdout=fh, stderr=subprocess.PIPE,
                       capture_output=False)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(b"cable,link,from") and out.read_bytes().count(b"\n") > 100


def test_closed_stdout_as_output_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(UsageError, match="standard output is closed"):
        safeio.atomic_write_bytes("-", b"x")


# ------------------------------------------------------------------------------------- inputs
def test_validate_dash_reads_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(EXAMPLE).read_bytes())))
    assert main(["validate", "-"]) == 0
    assert capsys.readouterr().out.strip().startswith("standard input: 97 components")


def test_validate_dash_in_a_pipe_and_its_errors():
    with open(EXAMPLE, "rb") as fh:
        done = program("validate", "-", stdin=fh)
    assert done.returncode == 0 and b"standard input: 97 components" in done.stdout
    bad = program("validate", "-", input=b"{not json")
    assert bad.returncode == 2 and bad.stderr.startswith(b"error: <stdin>:") and b"Traceback" not in bad.stderr
    binary = program("validate", "-", input=b"\xff\xfe\x00")
    assert binary.returncode == 2 and b"not a text (UTF-8) file" in binary.stderr


def test_run_reads_the_design_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(EXAMPLE).read_bytes())))
    assert main(["run", "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpus"] == 64


def test_stdin_over_the_size_cap_is_refused(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 101)))
    with pytest.raises(UsageError, match="more than the 100 bytes allowed"):
        safeio.read_stdin_bytes(what="design", max_bytes=100)


# ------------------------------------------------------------------------- program, desktop
def test_python_dash_m_designer():
    done = program("--version")
    assert done.returncode == 0 and done.stdout.startswith(b"dpu-designer ")
    assert program("validate", EXAMPLE).returncode == 0


def test_desktop_entry_starts_the_gui_script():
    entry = configparser.ConfigParser(interpolation=None, strict=True)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(resources_dir() / "dpu-designer.desktop", encoding="utf-8")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Terminal"] == "false" and d["Name"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    program_name = d["Exec"].split()[0]
    assert program_name == d["TryExec"] and program_name in project["gui-scripts"]
    assert d["Exec"].split()[1:] == ["%f"]  # one file, as the window takes
    assert (resources_dir() / "icons" / f"{d['Icon']}.svg").is_file()
    assert all(c in ("Science", "Engineering", "") for c in d["Categories"].split(";"))
    module, _, func = project["gui-scripts"][program_name].partition(":")
    assert callable(getattr(__import__(module, fromlist=[func]), func))


def test_gui_script_never_runs_a_sub_command(monkeypatch):
    """``dpu-designer-gui run`` opens a file named run (the window's parser), not the command."""
    import designer.gui.app as app

    opened = []
    monkeypatch.setattr(app, "run_gui", lambda file, screenshot=None, size=None: opened.append(file) or 0)
    assert main(["run"], window=True) == 0
    assert opened == ["run"]


def test_saving_a_design_to_dash_writes_stdout_and_leaves_dev_stdout(tmp_path, capfd):
    """``fileformat.save(design, "-")`` goes through safeio's one atomic write, which writes the
    console for ``-`` (``new -o -``): the design's text on stdout, and the ``/dev/stdout`` link is
    not replaced by a file (root could)."""
    from designer.topology import fileformat

    before = os.lstat("/dev/stdout")
    design = fileformat.load(EXAMPLE)
    fileformat.save(design, "-")
    out = capfd.readouterr().out
    assert fileformat.loads(out).name == design.name
    after = os.lstat("/dev/stdout")
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
