"""Autosave to a recovery file, and finding the files that a crashed session left behind.

Each open window writes ``<config>/recovery/autosave-<pid>-<n>.json`` (the design in the normal file
format, plus the path it came from) while it has unsaved changes, and deletes it when the changes are
saved or dropped. A file whose process is no longer running is left over from a crash.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path

from designer.paths import user_config_dir
from designer.topology import fileformat
from designer.topology.design import Design

_counter = itertools.count(1)


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

    def write(self, design: Design, original: str | None) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        data = {"original": original, "design": fileformat.to_dict(design)}
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.file)

    def discard(self) -> None:
        self.file.unlink(missing_ok=True)


def leftovers() -> list[Path]:
    """Recovery files of sessions that ended without cleaning up (newest first)."""
    folder = recovery_dir()
    if not folder.is_dir():
        return []
    out = []
    for file in folder.glob("autosave-*.json"):
        try:
            pid = int(file.stem.split("-")[1])
        except (IndexError, ValueError):
            continue
        if not _alive(pid):
            out.append(file)
    return sorted(out, key=lambda f: f.stat().st_mtime, reverse=True)


def read(file: Path) -> Recovered:
    """Load a recovery file; DesignFileError if it is damaged."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        design = fileformat.from_dict(data["design"], source=str(file))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise fileformat.DesignFileError(str(file), [("", f"unreadable recovery file ({exc})")]) from exc
    return Recovered(file, data.get("original"), design)
