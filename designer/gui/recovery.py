"""Autosave to a recovery file, and finding the files that a crashed session left behind.

Each open window writes ``<config>/recovery/autosave-<pid>-<n>.json`` (the design in the normal file
format, the path it came from in ``meta["recovery_of"]``) while it has unsaved changes, and deletes it
when the changes are saved or dropped. It is written with :func:`fileformat.save`, so it is checked
like any design file and replaced atomically. A file whose process is no longer running is left over
from a crash.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from designer.paths import user_config_dir
from designer.topology import fileformat
from designer.topology.design import Design

_counter = itertools.count(1)
#: design.meta key that holds the path the recovered design came from (None: never saved)
RECOVERY_KEY = "recovery_of"


def recovery_dir() -> Path:
    return user_config_dir() / "recovery"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Recovered:
    file: Path
    original: str | None
    design: Design


class Autosaver:
    """The recovery file of one window."""

    def __init__(self) -> None:
        self.file = recovery_dir() / f"autosave-{os.getpid()}-{next(_counter)}.json"

    def write(self, design: Design, original: str | None) -> str | None:
        """Write the recovery file. Returns None, or why it could not be written (an autosave
        runs from a timer: it must never raise, and the previous recovery file stays intact)."""
        copy = design.copy()
        copy.meta = {**copy.meta, RECOVERY_KEY: original}
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fileformat.save(copy, self.file)
        except fileformat.DesignFileError as exc:
            return str(exc)
        except OSError as exc:
            return f"{self.file}: cannot save: {exc.strerror or exc}"
        return None

    def discard(self) -> None:
        """Delete the recovery file. It runs from a timer too, so it never raises: a file that
        cannot be deleted (folder made read-only...) is at worst offered again at the next start."""
        with contextlib.suppress(OSError):
            self.file.unlink(missing_ok=True)


def _pid_of(name: str) -> int | None:
    """The process id in ``autosave-<pid>-<n>.json`` (or its hidden temporary file)."""
    try:
        return int(name.lstrip(".").split("-")[1])
    except (IndexError, ValueError):
        return None


def leftovers() -> list[Path]:
    """Recovery files of sessions that ended without cleaning up (newest first). Temporary files
    of a save that such a session did not finish are deleted (the recovery file itself is intact)."""
    folder = recovery_dir()
    if not folder.is_dir():
        return []
    for tmp in folder.glob(".autosave-*.tmp"):
        pid = _pid_of(tmp.name)
        if pid is not None and not _alive(pid):
            tmp.unlink(missing_ok=True)
    out = []
    for file in folder.glob("autosave-*.json"):
        pid = _pid_of(file.name)
        if pid is not None and not _alive(pid):
            out.append(file)
    return sorted(out, key=lambda f: f.stat().st_mtime, reverse=True)


def read(file: Path) -> Recovered:
    """Load a recovery file; DesignFileError if it is damaged."""
    design = fileformat.load(file)
    original = design.meta.pop(RECOVERY_KEY, None)
    return Recovered(file, original if isinstance(original, str) else None, design)
