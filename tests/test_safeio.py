"""designer.safeio: output paths are checked, outputs are written atomically, inputs are read safely."""

from __future__ import annotations

import errno
import os
import socket
import stat
import threading

import pytest

from designer import safeio
from designer.errors import UsageError


def test_writes_a_new_file_with_umask_mode(tmp_path):
    target = tmp_path / "out.csv"
    safeio.atomic_write_bytes(target, b"a,b\n")
    assert target.read_bytes() == b"a,b\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~safeio._umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary left


def test_keeps_an_existing_files_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    safeio.atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_device_node_is_refused_and_survives():
    with pytest.raises(UsageError, match="is a device"):
        safeio.atomic_write_bytes("/dev/null", b"x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = []

    def attempt():
        try:
            safeio.atomic_write_bytes(fifo, b"x")
        except UsageError as exc:
            done.append(str(exc))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    assert done and "pipe (FIFO)" in done[0]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_fifo_as_input_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = []

    def attempt():
        try:
            safeio.open_input_bytes(fifo, what="workload")
        except UsageError as exc:
            done.append(str(exc))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    assert done and done[0].startswith("workload ") and "FIFO" in done[0]


def test_socket_and_folder_are_refused(tmp_path):
    with pytest.raises(UsageError, match="is a folder"):
        safeio.check_output_path(tmp_path)
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(UsageError, match="is a socket"):
            safeio.check_output_path(sock_path)
    finally:
        sock.close()


def test_symlink_stays_a_symlink(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert safeio.check_output_path(link) == real.resolve()
    safeio.atomic_write_text(link, "new")
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_dangling_symlink_writes_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "later.json")
    safeio.atomic_write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "later.json").read_text() == "x"


def test_symlink_loop_is_one_line(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(UsageError, match="cannot follow"):
        safeio.check_output_path(a)


def test_output_equal_to_input_is_refused(tmp_path):
    src = tmp_path / "design.json"
    src.write_text("{}")
    with pytest.raises(UsageError, match="input file"):
        safeio.check_output_path(src, inputs=[src])
    link = tmp_path / "alias.json"
    link.symlink_to(src)
    with pytest.raises(UsageError, match="input file"):
        safeio.atomic_write_text(link, "oops", inputs=[src])
    hard = tmp_path / "hard.json"
    os.link(src, hard)
    with pytest.raises(UsageError, match="input file"):
        safeio.check_output_path(hard, inputs=[src])
    assert src.read_text() == "{}"
    # a relative spelling of the same path is the same file
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(UsageError, match="input file"):
            safeio.check_output_path("./design.json", inputs=[str(src)])
    finally:
        os.chdir(cwd)


def test_missing_folder_and_empty_name(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        safeio.check_output_path(tmp_path / "no" / "such" / "x.pdf")
    with pytest.raises(UsageError, match="empty"):
        safeio.check_output_path("")


def test_failure_mid_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "report.pdf"
    target.write_bytes(b"%PDF old")
    with pytest.raises(RuntimeError):
        with safeio.atomic_output(target) as tmp:
            tmp.write_bytes(b"%PDF half")
            raise RuntimeError("renderer crashed")
    assert target.read_bytes() == b"%PDF old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_disk_full_is_one_line_and_changes_nothing(tmp_path, monkeypatch, code):
    target = tmp_path / "report.pdf"
    target.write_bytes(b"%PDF old")
    real_fsync = os.fsync

    def full(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UsageError, match="disk full while writing .*report.pdf; nothing was changed"):
        safeio.atomic_write_bytes(target, b"%PDF new" * 1000)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_bytes() == b"%PDF old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


def test_input_size_cap_and_endless_devices():
    with pytest.raises(UsageError, match="is a device"):
        safeio.open_input_bytes("/dev/zero", what="catalog", max_bytes=1000)


def test_input_too_large_and_bad_utf8(tmp_path):
    big = tmp_path / "big.toml"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(UsageError, match="more than the 1,000"):
        safeio.open_input_bytes(big, max_bytes=1000)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"name = \"\xff\xfe\"\n")
    with pytest.raises(UsageError, match="not UTF-8 text .*offset 8"):
        safeio.open_input_text(bad)
    with pytest.raises(UsageError, match="no such file"):
        safeio.open_input_bytes(tmp_path / "missing")
    with pytest.raises(UsageError, match="is a folder"):
        safeio.open_input_bytes(tmp_path)
