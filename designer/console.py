"""What the CLI prints: design strings made harmless, any console encoding, one place for both.

A design file is data from anyone: a component id, a workload name or a rack label can hold a
terminal escape sequence (``ESC ]52;...`` writes the clipboard of some terminals, ``ESC [2J``
clears the screen, ``ESC ]8;;url`` makes a hidden link), a carriage return or backspace that
overwrites what was printed before it on the line, a line end that forges a line of its own
(``error: ...`` under a warning), or a Unicode bidirectional override that shows text in another
order than it is (CVE-2021-42574, "Trojan Source"). Printed as they are, they act on the user's
terminal.

Two parts, one rule (:data:`UNSAFE`):

* :func:`shown` turns one piece of design text into one printable line: every C0 control
  (``U+0000``-``U+001F``, including line end and tab), DEL, every C1 control (``U+0080``-``U+009F``),
  the bidirectional embeddings, overrides and isolates (``U+202A``-``U+202E``, ``U+2066``-``U+2069``)
  and the line and paragraph separators (``U+2028``, ``U+2029``) become ``\\uXXXX`` (JSON's escape,
  so text that is already JSON stays the same JSON). Every command uses it on the design strings
  it puts into a line.
* :class:`ConsoleStream`, which :func:`console_streams` puts in front of ``sys.stdout`` and
  ``sys.stderr`` for the length of a command (``designer.cli.main``), is the backstop for a print
  site that forgot :func:`shown`: it applies the same rule to everything written except the line
  end and tab a line of output is made of, and writes what the stream's encoding cannot hold
  with ``?`` instead of raising ``UnicodeEncodeError`` (``LANG=C`` without UTF-8 mode,
  ``PYTHONIOENCODING=latin-1``, a Windows console page): a result is never lost to a traceback
  about one character of a name.

Stdlib only, no Qt (every layer may use it).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import TextIO

#: what must never reach a terminal raw: C0 controls, DEL, C1 controls, the bidirectional
#: embeddings/overrides/isolates and the Unicode line/paragraph separators
UNSAFE = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{UNSAFE}]")
#: the same without the line end and tab that lines of output are made of
_UNSAFE_IN_OUTPUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def shown(text: object) -> str:
    """``text`` (any object: its ``str``) as one printable line: the characters of :data:`UNSAFE`
    become ``\\uXXXX``; everything else, letters of any script included, is kept as it is."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s


def harmless(text: str) -> str:
    """``text`` with the :data:`UNSAFE` characters other than line end and tab as ``\\uXXXX``
    (what :class:`ConsoleStream` writes)."""
    return _UNSAFE_IN_OUTPUT.sub(_escape, text) if _UNSAFE_IN_OUTPUT.search(text) else text


class ConsoleStream(io.TextIOBase):
    """A text stream in front of ``stream``: what is written goes through :func:`harmless` and is
    encoded with ``?`` for what the stream's encoding cannot hold. Everything else (``buffer``,
    ``fileno``, ``isatty``, ``encoding``) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:  # type: ignore[override]
        safe = harmless(text)
        try:
            self.stream.write(safe)
        except UnicodeEncodeError:
            enc = getattr(self.stream, "encoding", None) or "ascii"
            self.stream.write(safe.encode(enc, "replace").decode(enc, "replace"))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        """Closes this wrapper only (the stream under it stays open); a flush that fails here, at
        garbage collection, is the caller's to report, not an 'Exception ignored' line."""
        with contextlib.suppress(OSError, ValueError):
            super().close()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "replace"

    @property
    def buffer(self):  # the bytes under the text (``-`` outputs, ``safeio.write_stdout``)
        self.stream.flush()
        return self.stream.buffer  # type: ignore[attr-defined]


def real(stream: TextIO | None) -> TextIO | None:
    """The stream under any :class:`ConsoleStream` wrappers."""
    while isinstance(stream, ConsoleStream):
        stream = stream.stream
    return stream


@contextlib.contextmanager
def console_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` behind a :class:`ConsoleStream` while the block runs,
    then the streams that were there (also when they were replaced meanwhile, as pytest's capture
    does, or closed: a closed stream is None and stays None)."""
    saved = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, ConsoleStream):
        sys.stdout = ConsoleStream(sys.stdout)  # type: ignore[assignment]
    if sys.stderr is not None and not isinstance(sys.stderr, ConsoleStream):
        sys.stderr = ConsoleStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        for name, stream in zip(("stdout", "stderr"), saved):
            current = getattr(sys, name)
            if isinstance(current, ConsoleStream):
                with contextlib.suppress(OSError, ValueError):
                    current.flush()
            setattr(sys, name, stream)
