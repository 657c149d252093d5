"""Safe file input and output for everything the CLI, the report and the GUI write or read.

Stdlib only, no Qt. Every output path goes through :func:`check_output_path` (refuses folders,
device nodes, pipes, sockets, a path equal to one of the inputs, a missing or read-only folder) and
is written through :func:`atomic_output`: the data go to a temporary file in the target's folder,
which is flushed to disk and renamed over the target only when the whole file is written. A crash,
a SIGKILL or a full disk therefore leave either the old file or no file, never a truncated one
(derived: POSIX ``rename(2)`` replaces the directory entry atomically within one file system;
``fsync(2)`` of the file before and of the folder after the rename makes the new entry durable).

Inputs go through :func:`open_input_bytes`: the file is opened non-blocking and checked to be a
regular file *before* any read, so a FIFO or ``/dev/zero`` given as input is refused at once
instead of hanging or filling memory.

The console (the Unix convention): an output named ``-`` is this process's standard output, and so
is a name that *is* it (``/dev/stdout``, ``/dev/fd/1``, or any path that is the same file as file
descriptor 1: the terminal device it runs on, the pipe or file it is redirected to); ``/dev/stderr``
and its equivalents are standard error (:func:`console_target`). Such an output is written whole
to a temporary file first, as any other, and copied to the stream only once complete, so a failed
command writes nothing rather than half a CSV. Binary data (a PDF, a PNG) is refused when the
stream is a terminal; text to a terminal goes through ``designer.console`` (no raw escape
sequences). An input named ``-`` (or ``/dev/stdin``) is standard input, read with the same size
cap (:func:`read_input_bytes`).

Temporary files are named ``.<target>.<host>.<pid>.<random>.tmp<ext>``: an interrupted run
(Ctrl-C, SIGTERM: see ``designer.cli.console``) removes its own, and one that could not (SIGKILL,
a power cut) leaves a file that the next write of the same target removes once no process of
that number runs on this host (:func:`_remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import socket
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from designer.errors import UsageError

PathLike = str | os.PathLike[str]

_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}


def _kind(mode: int) -> str | None:
    """A user-facing name for a file that is not a regular file (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _resolve(path: Path, what: str) -> Path:
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UsageError(f"{what} {path}: cannot follow the path ({exc}); give a plain file name") from None


#: names that are this process's standard streams whatever they are connected to
STDOUT_NAMES = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})
STDERR_NAMES = frozenset({"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"})
STDIN_NAMES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
#: what :func:`check_output_path` returns for them (two outputs to one stream compare equal). A
#: writer of its own that makes a temporary file next to the target and renames it fails there
#: (no file can be made in ``/dev/fd``) instead of replacing ``/dev/stdout`` with a regular file
#: as root could: every writer should go through :func:`atomic_output`, which writes the stream.
STDOUT, STDERR = Path("/dev/fd/1"), Path("/dev/fd/2")


def console_target(path: PathLike) -> int | None:
    """1 when ``path`` names this process's standard output, 2 standard error, else None: ``-``
    and the names of :data:`STDOUT_NAMES`/:data:`STDERR_NAMES`, or a path that is the same file as
    descriptor 1 or 2 (``os.path.samestat``: the terminal device, pipe or file a stream is
    connected to). A closed stream is no target."""
    text = os.fspath(path)
    if text in STDOUT_NAMES:
        return 1
    if text in STDERR_NAMES:
        return 2
    try:
        info = os.stat(text)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None  # a regular file is written as one, even when a stream goes there too
    for fd in (1, 2):
        try:
            if os.path.samestat(info, os.fstat(fd)):
                return fd
        except OSError:
            continue
    return None


#: the words every message uses for the two output streams (:func:`stream_name`)
STREAM_NAMES = {1: "standard output", 2: "standard error"}


def stream_name(path: PathLike | None) -> str | None:
    """"standard output" or "standard error" for a ``path`` that :func:`console_target` finds
    written to that stream, else None: messages name the stream the data really went to."""
    fd = None if path is None else console_target(path)
    return STREAM_NAMES.get(fd) if fd else None


def is_console(path: PathLike | None) -> bool:
    """Whether ``path`` is written to standard output or error (:func:`console_target`): a
    command then says what it did on stderr, not mixed into the data on stdout."""
    return path is not None and console_target(path) is not None


def check_output_path(path: PathLike, *, inputs: Iterable[PathLike | None] = (), what: str = "output") -> Path:
    """Check that ``path`` can be written as a whole new regular file and return the real target.

    ``-`` and the other names of the standard streams (:func:`console_target`) are allowed and
    return :data:`STDOUT` or :data:`STDERR`.

    Refused with a one-line :class:`UsageError` (what, where, how to fix): an empty name; a folder;
    a device node, FIFO or socket (writing there is never what a user means, and ``os.replace``
    would swap ``/dev/null`` for a regular file); a path that is the same file as one of ``inputs``
    (the output would destroy the input it is computed from); a missing or non-writable folder.
    A symlink is allowed: the returned path is the symlink's resolved target, so the link stays a
    link and the file it points to is replaced.
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise UsageError(f"{what}: the file name is empty; give a file name")
    fd = console_target(text)
    if fd is not None:
        return STDOUT if fd == 1 else STDERR
    raw = Path(text)
    target = _resolve(raw, what)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UsageError(f"{what} {raw}: cannot check the path ({exc.strerror or exc})") from None
    if info is not None:
        kind = _kind(info.st_mode)
        if kind is not None:
            raise UsageError(f"{what} {raw} is {kind}, not a file; give the name of a file to write")
    for source in inputs:
        if source is None or not str(os.fspath(source)).strip():
            continue
        src = Path(os.fspath(source))
        same = False
        try:
            same = info is not None and os.path.samefile(src, target)
        except OSError:
            same = False
        if not same:
            try:
                same = src.resolve() == target
            except (RuntimeError, OSError):
                same = False
        if same:
            raise UsageError(
                f"{what} {raw} is the input file {src}; writing it would destroy the input: give another file name"
            )
    folder = target.parent
    if not folder.is_dir():
        raise UsageError(f"{what} {raw}: the folder {folder} does not exist; create it or give another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {raw}: the folder {folder} is not writable; give another path")
    return target


@functools.cache
def _umask() -> int:
    """The process umask (read once: it can only be read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_path(path: Path | str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); a folder cannot be opened for fsync on every system."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: how much of the target's name a temporary file's name keeps (a name is at most 255 bytes)
_NAME_KEPT = 80


def _host_tag() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "", socket.gethostname())[:16] or "host"


def _temp_prefix(target: Path) -> str:
    """``.<target name>.<host>.`` (the pid, a random part and ``.tmp<ext>`` follow)."""
    return f".{target.name[:_NAME_KEPT]}.{_host_tag()}."


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (signal 0 checks without sending)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # someone else's process, or cannot tell: keep its file
    return True


_STALE = re.compile(r"(\d+)\.[A-Za-z0-9_]+\.tmp")


def _remove_stale_temporaries(target: Path) -> int:
    """Remove the temporary files of earlier writes of ``target`` whose process is gone (killed
    before it could remove them); return how many. Only files named as :func:`atomic_output`
    names them for this target on this host are looked at; one whose process still runs (or whose
    number is in use again) is left alone."""
    prefix = _temp_prefix(target)
    removed = 0
    try:
        entries = os.scandir(target.parent)
    except OSError:
        return 0
    with entries:
        for entry in entries:
            if not entry.name.startswith(prefix):
                continue
            m = _STALE.match(entry.name, len(prefix))
            if m is None or _alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def write_console(fd: int, data: bytes, *, what: str = "output") -> None:
    """Write a finished output to standard output (``fd`` 1) or error (2).

    A pipe or a file gets the bytes as they are. A terminal gets text only: UTF-8 text is written
    through the text stream (``designer.console`` escapes what would act on the terminal), binary
    data is refused (a PDF on a terminal is noise and may hold escape sequences)."""
    stream = sys.stdout if fd == 1 else sys.stderr
    name = "standard output" if fd == 1 else "standard error"
    if stream is None:
        raise UsageError(f"{what} -: {name} is closed; give a file name")
    tty = False
    with contextlib.suppress(AttributeError, ValueError, OSError):
        tty = stream.isatty()
    if tty:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            raise UsageError(f"{what} -: binary data is not written to a terminal; redirect it "
                             f"(> file, | program) or give a file name")
        stream.write(text.replace("\r\n", "\n"))  # a CSV's line ends are the terminal's own
        stream.flush()
        return
    stream.flush()
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text-only stream (an embedding application's): as text
        stream.write(data.decode("utf-8", "replace"))
    else:
        buffer.write(data)
        buffer.flush()


@contextlib.contextmanager
def atomic_output(
    path: PathLike, *, inputs: Iterable[PathLike | None] = (), what: str = "output", suffix: str | None = None
) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; when the block ends without an exception the
    file is fsync'ed, given the old file's permission bits (a new file: 0666 less the umask) and
    renamed over the (symlink-resolved) target, then the folder is fsync'ed.

    On any exception the temporary file is removed and the target is left untouched. A full disk
    (ENOSPC, EDQUOT, EFBIG) becomes ``UsageError("disk full while writing X; nothing was changed")``;
    any other OS error while writing becomes a one-line UsageError too. ``suffix`` sets the temporary
    file's extension (some writers pick the format from it); by default the target's own suffix.
    """
    target = check_output_path(path, inputs=inputs, what=what)
    console = console_target(path) if target in (STDOUT, STDERR) else None
    if console is not None:
        with _console_output(console, os.fspath(path), what, suffix) as tmp_path:
            yield tmp_path
        return
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    _remove_stale_temporaries(target)
    tmp: str | None = None
    try:
        ext = target.suffix if suffix is None else suffix
        fd, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(target)}{os.getpid()}.", suffix=f".tmp{ext}",
                                   dir=target.parent)
        os.close(fd)
        yield Path(tmp)
        _fsync_path(tmp)
        os.chmod(tmp, mode)  # mkstemp makes it 0600
        os.replace(tmp, target)
        tmp = None
        _fsync_folder(target.parent)
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            raise UsageError(f"disk full while writing {os.fspath(path)}; nothing was changed") from None
        raise UsageError(
            f"cannot write {what} {os.fspath(path)}: {exc.strerror or exc}; nothing was changed"
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def _console_output(fd: int, name: str, what: str, suffix: str | None) -> Iterator[Path]:
    """:func:`atomic_output` for a standard stream: a temporary file in the system's temporary
    folder, copied to the stream when the block ends without an exception, removed either way."""
    folder = Path(tempfile.gettempdir())
    stand_in = folder / "dpu-designer-output"
    _remove_stale_temporaries(stand_in)
    tmp: str | None = None
    try:
        fd_tmp, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(stand_in)}{os.getpid()}.",
                                       suffix=f".tmp{suffix or ''}", dir=folder)
        os.close(fd_tmp)
        yield Path(tmp)
        with open(tmp, "rb") as fh:
            data = fh.read()
        write_console(fd, data, what=what)
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            raise UsageError(f"disk full while writing {name}; nothing was written") from None
        raise UsageError(f"cannot write {what} {name}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def atomic_write_bytes(path: PathLike, data: bytes, *, inputs: Iterable[PathLike | None] = (), what: str = "output") -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_output`); return the real target."""
    target = check_output_path(path, inputs=inputs, what=what)
    if target in (STDOUT, STDERR):  # no temporary needed: the data are whole already
        write_console(1 if target == STDOUT else 2, data, what=what)
        return target
    with atomic_output(path, inputs=inputs, what=what) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
    return check_output_path(path, what=what)


def atomic_write_text(
    path: PathLike, text: str, *, inputs: Iterable[PathLike | None] = (), what: str = "output"
) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically; return the real target."""
    return atomic_write_bytes(path, text.encode("utf-8"), inputs=inputs, what=what)


def open_input_bytes(path: PathLike, *, what: str = "input", max_bytes: int | None = None) -> bytes:
    """Read a whole input file, refusing anything that is not a regular file before reading.

    The file is opened with ``O_NONBLOCK`` (so opening a FIFO returns at once instead of waiting
    for a writer) and ``fstat``-checked on the open descriptor (no race between check and read).
    ``max_bytes`` caps what is read: a larger file is refused with its size and the limit, which
    also guards against endless files such as ``/dev/zero``.
    """
    raw = Path(os.fspath(path))
    if not str(raw).strip():
        raise UsageError(f"{what}: the file name is empty; give a file name")
    if os.fspath(path) in STDIN_NAMES:
        return read_stdin_bytes(what=what, max_bytes=max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(raw, flags)
    except FileNotFoundError:
        raise UsageError(f"{what} {raw}: no such file; check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {raw} is a folder, not a file; give a file") from None
    except OSError as exc:
        raise UsageError(f"{what} {raw}: cannot open ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise UsageError(f"{what} {raw} is {kind}, not a regular file; give a file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise UsageError(
                f"{what} {raw} is {info.st_size:,} bytes, more than the {max_bytes:,} allowed; "
                "is it the right file?"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        limit = None if max_bytes is None else max_bytes + 1
        while True:
            want = 1 << 20 if limit is None else min(1 << 20, limit - total)
            if want <= 0:
                break
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if max_bytes is not None and total > max_bytes:
            raise UsageError(f"{what} {raw} is larger than the {max_bytes:,} bytes allowed; is it the right file?")
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{what} {raw}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_stdin_bytes(*, what: str = "input", max_bytes: int | None = None) -> bytes:
    """Standard input, whole (``-`` as an input file), at most ``max_bytes`` (more is refused)."""
    stream = sys.stdin
    if stream is None:
        raise UsageError(f"{what} -: standard input is closed; give a file name")
    source = getattr(stream, "buffer", None)
    try:
        if source is None:
            raw = stream.read().encode("utf-8")
        else:
            raw = source.read(-1 if max_bytes is None else max_bytes + 1)
    except OSError as exc:
        raise UsageError(f"{what} -: cannot read standard input ({exc.strerror or exc})") from None
    if max_bytes is not None and len(raw) > max_bytes:
        raise UsageError(f"{what} -: standard input holds more than the {max_bytes:,} bytes allowed; "
                         "is it the right file?")
    return raw


def is_stdin(path: PathLike | None) -> bool:
    """Whether ``path`` names standard input (``-``, ``/dev/stdin``)."""
    return path is not None and os.fspath(path) in STDIN_NAMES


def open_input_text(path: PathLike, *, what: str = "input", max_bytes: int | None = None) -> str:
    """:func:`open_input_bytes` decoded as UTF-8 (a BOM is accepted); bad bytes give one clear line."""
    raw = open_input_bytes(path, what=what, max_bytes=max_bytes)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{what} {os.fspath(path)}: not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8"
        ) from None
