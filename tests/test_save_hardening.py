"""Saving a design never replaces what is not a design file (issue 14): devices, FIFOs and folders
are refused, a symlink stays a link, an input file is not overwritten, and no file is written that
the loader would refuse. ``dpu-designer new`` checks every numeric option before it builds."""

from __future__ import annotations

import dataclasses
import os
import stat
import threading

import pytest

from designer import cli
from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, load, save
from designer.topology.templates import TEMPLATES


@pytest.fixture(scope="module")
def design():
    return TEMPLATES["leaf-spine"](servers=2)


@pytest.mark.parametrize("target", ["/dev/null", "/dev/zero"])
def test_a_device_is_not_replaced(design, target):
    before = os.stat(target)
    with pytest.raises(DesignFileError, match="is a device"):
        save(design, target)
    after = os.stat(target)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_a_fifo_is_refused_without_blocking(design, tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(pytest.raises(DesignFileError, save, design, fifo)))
    worker.start()
    worker.join(10)
    assert done and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_folder_is_refused(design, tmp_path):
    with pytest.raises(DesignFileError, match="is a folder"):
        save(design, tmp_path)
    assert tmp_path.is_dir()


def test_a_symlink_stays_a_link_and_its_file_is_replaced(design, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    save(design, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert load(real).topology.snapshot() == design.topology.snapshot()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]  # no leftovers


def test_an_input_file_is_not_overwritten(design, tmp_path):
    src = tmp_path / "in.json"
    src.write_text("input")
    with pytest.raises(DesignFileError, match="input file"):
        save(design, tmp_path / "." / "in.json", inputs=(src,))
    assert src.read_text() == "input"


@pytest.mark.parametrize("limit, what", [("MAX_COMPONENTS", "components"), ("MAX_LINKS", "links")])
def test_no_file_with_more_items_than_the_loader_reads(design, tmp_path, monkeypatch, limit, what):
    count = len(getattr(design.topology, what))
    monkeypatch.setattr(fileformat, limit, count - 1)
    with pytest.raises(DesignFileError, match=f"cannot be saved: {count:,} {what}"):
        save(design, tmp_path / "d.json")
    assert not list(tmp_path.iterdir())


def test_no_file_larger_than_the_loader_reads(design, tmp_path, monkeypatch):
    size = len(fileformat.dumps(design).encode())
    monkeypatch.setattr(fileformat, "MAX_FILE_BYTES", size - 1)
    with pytest.raises(DesignFileError, match="reads design files up to"):
        save(design, tmp_path / "d.json")
    assert not list(tmp_path.iterdir())
    monkeypatch.setattr(fileformat, "MAX_FILE_BYTES", size)
    save(design, tmp_path / "d.json")  # exactly at the limit: written, and it loads
    assert load(tmp_path / "d.json").topology.snapshot() == design.topology.snapshot()


#: every numeric option of ``new``, with values out of range
BAD_NUMBERS = [("--servers", "0"), ("--servers", "-5"), ("--storage-count", "-1"),
               ("--storage-count", "1000000000"), ("--storage-count", "200000"),
               ("--oversubscription", "nan"), ("--oversubscription", "inf"), ("--oversubscription", "0.5"),
               ("--servers-per-rack", "0"), ("--su-size", "0"), ("--gpus-per-server", "-1"),
               ("--su-size", "9999999999")]


@pytest.mark.parametrize("flag, value", BAD_NUMBERS)
def test_new_refuses_numbers_out_of_range_in_one_line(flag, value, tmp_path, capsys):
    out = tmp_path / "d.json"
    assert cli.main(["new", "--template", "rail-optimized", "--servers", "4", flag, value, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and flag in err and "\n" not in err
    assert not out.exists()


def test_new_checks_the_output_before_building(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(TEMPLATES, "leaf-spine",
                        dataclasses.replace(TEMPLATES["leaf-spine"], build=lambda **o: pytest.fail("built")))
    assert cli.main(["new", "--template", "leaf-spine", "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
