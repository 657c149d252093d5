"""Every CLI output path and file input is hostile: a folder, a device, a FIFO, a socket, the input
itself, a symlink, a missing folder. Each gives exit 2 and one line on stderr (or, for a symlink,
writes through the link), never a hang, a traceback or a replaced device node."""

from __future__ import annotations

import os
import shutil
import stat
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.cli import main
from designer.paths import resources_dir

EXAMPLE = str(resources_dir() / "examples" / "example.json")


def run_cli(argv, seconds: float = 120.0):
    """main(argv) in a thread, so a blocking open fails the test instead of hanging the suite."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(main(argv)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"{argv} blocked"
    return out[0]


@pytest.fixture
def design(tmp_path):
    path = tmp_path / "design.json"
    shutil.copy(EXAMPLE, path)
    return path


def _hostile(kind: str, tmp_path, design):
    if kind == "folder":
        return str(tmp_path)
    if kind == "device":
        return "/dev/null"
    if kind == "fifo":
        path = tmp_path / "pipe.out"
        os.mkfifo(path)
        return str(path)
    if kind == "input":
        return str(design)
    if kind == "input-symlink":
        link = tmp_path / "alias.out"
        link.symlink_to(design)
        return str(link)
    if kind == "missing-folder":
        return str(tmp_path / "no" / "such" / "out")
    if kind == "empty":
        return ""
    raise AssertionError(kind)


# (command line with OUT for the output path, suffix the output needs)
OUTPUT_COMMANDS = {
    "run --timeline": (["run", "{design}", "--timeline", "{out}"], ".csv"),
    "report -o": (["report", "{design}", "-o", "{out}"], ".pdf"),
    "export --bom": (["export", "{design}", "--bom", "{out}"], ".csv"),
    "export --cabling": (["export", "{design}", "--cabling", "{out}"], ".csv"),
    "export --elevation": (["export", "{design}", "--elevation", "{out}"], ".svg"),
}
KINDS = ["folder", "device", "fifo", "input", "input-symlink", "missing-folder", "empty"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", list(OUTPUT_COMMANDS))
def test_hostile_output_paths_are_one_line(command, kind, tmp_path, design, capsys):
    argv, suffix = OUTPUT_COMMANDS[command]
    out = _hostile(kind, tmp_path, design)
    if kind in ("missing-folder",):
        out += suffix
    before = design.read_bytes()
    args = [a.format(design=design, out=out) for a in argv]
    assert run_cli(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert design.read_bytes() == before                       # the input is never touched
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)            # the device stays a device
    if kind == "fifo":
        assert stat.S_ISFIFO(os.stat(out).st_mode)


@pytest.mark.parametrize("command", ["run --timeline", "export --bom", "export --elevation"])
def test_output_through_a_symlink_keeps_the_link(command, tmp_path, design):
    argv, suffix = OUTPUT_COMMANDS[command]
    real = tmp_path / f"real{suffix}"
    real.write_text("old")
    link = tmp_path / f"link{suffix}"
    link.symlink_to(real)
    assert run_cli([a.format(design=design, out=link) for a in argv]) == 0
    assert link.is_symlink() and real.read_text() != "old" and real.stat().st_size > 0


@pytest.mark.parametrize("target", ["fifo", "folder", "device", "missing"])
@pytest.mark.parametrize("command", ["run", "collective", "sweep", "report", "export"])
def test_hostile_design_inputs(command, target, tmp_path, capsys):
    path = {"folder": str(tmp_path), "device": "/dev/zero", "missing": str(tmp_path / "x.json")}.get(target)
    if target == "fifo":
        path = str(tmp_path / "in.json")
        os.mkfifo(path)
    extra = {"sweep": ["--param", "global_batch", "--values", "256"], "report": ["-o", str(tmp_path / "r.pdf")],
             "export": ["--bom", str(tmp_path / "b.csv")]}.get(command, [])
    assert run_cli([command, path, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("target", ["fifo", "folder", "device", "bad-utf8", "deep"])
def test_hostile_workload_files(target, tmp_path, capsys):
    path = tmp_path / "w.json"
    if target == "fifo":
        os.mkfifo(path)
    elif target == "folder":
        path.mkdir()
    elif target == "device":
        path.symlink_to("/dev/zero")
    elif target == "bad-utf8":
        path.write_bytes(b'{"name": "\xff"}')
    else:
        path.write_text("[" * 100000 + "]" * 100000)
    assert run_cli(["run", EXAMPLE, "--workload", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --workload") and err.count("\n") == 1, err


def test_collective_on_one_gpu_is_a_clear_answer(capsys):
    assert main(["collective", EXAMPLE, "--gpus", "1"]) == 2
    out, err = capsys.readouterr()
    assert "inf" not in out and "one GPU moves no data" in err and err.count("\n") == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e400", "", " ", "1e-400",
                                        "0x10", "9" * 40, "1_000", "٣"]),
                       st.text(max_size=8)),
       option=st.sampled_from(["--tp", "--pp", "--dp", "--micro-batch", "--global-batch", "--seq",
                               "--tokens", "--tflops-per-gpu", "--seed", "--interleave"]))
def test_fuzz_run_numeric_options(option, value, capsys):
    """Hostile numbers give exit 0 (a valid run) or exit 2 with one line; nothing else."""
    code = main(["run", EXAMPLE, "--json", f"{option}={value}"])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err
    else:
        assert "NaN" not in out and "Infinity" not in out


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(st.sampled_from(["nan", "inf", "-1", "0", "1e400", "", "8Q", "1T", "-8G"]),
                       st.text(max_size=6)),
       option=st.sampled_from(["--min", "--max", "--gpus"]))
def test_fuzz_collective_options(option, value, capsys):
    code = main(["collective", EXAMPLE, f"{option}={value}", "--max=" + ("64K" if option != "--max" else value)])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err
    else:
        assert " inf " not in out and " nan " not in out
