"""The ``dpu-designer`` command: the GUI by default, headless sub-commands otherwise.

``dpu-designer [FILE] [--screenshot OUT.png]`` opens the main window (on FILE, or on the embedded
example design). ``dpu-designer COMMAND ...`` runs a headless command (see ``--help``).
Exit codes: 0 success, 1 the command ran and found problems (``validate``) or its result holds a
figure that is not a finite number, 2 bad input (one line on stderr, never a traceback), 130
interrupted (Ctrl-C), 143 terminated (SIGTERM).

Conventions: an output file named ``-`` is standard output and an input named ``-`` standard input
(``designer.safeio``); whatever a command prints goes through ``designer.console`` (design strings
escaped, any console encoding).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys

from designer import __version__
from designer.commands import COMMANDS
from designer.console import console_streams, real, shown
from designer.errors import ResultError, UsageError


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as UsageError (so main() prints one line, exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")

    def _get_value(self, action, arg_string):  # type: ignore[no-untyped-def]
        """A value through its option's type; a type's own UsageError ("expected a whole number,
        got 'abc'") is named after the option it came from, as argparse names its own ("argument
        --support-pct: ..."), unless the message names the option already ("--seed x: ...")."""
        try:
            return super()._get_value(action, arg_string)
        except UsageError as exc:
            message = str(exc)
            flags = action.option_strings
            if flags and not message.startswith(tuple(flags)):
                self.error(f"argument {'/'.join(flags)}: {message}")
            raise


def _available_commands() -> dict[str, object]:
    """Every sub-command module that exists, imported (a slot in COMMANDS without its module is
    skipped)."""
    return {name: module for name in COMMANDS if (module := _command_module(name)) is not None}


def _command_module(name: str):
    try:
        return importlib.import_module(f"designer.commands.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"designer.commands.{name}":
            raise
        return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser. ``only``: the sub-command about to run: only its module is imported and
    its sub-parser registered (its own usage, help and errors are all that parsing its line can
    print). ``only`` None (``dpu-designer --help``): every command whose module exists gets a
    stand-in sub-parser with its help line from :data:`designer.commands.COMMANDS`, so the list
    shows them all without importing the engine, numpy or Qt; ``"*"``: every command registered
    for real."""
    parser = _Parser(
        prog="dpu-designer",
        description="Design GPU training clusters with DPUs and see what the design gives.",
        epilog="Without a command, opens the designer window (on FILE if given).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if only not in (None, "*", name):
            continue
        if name == only or only == "*":
            module = _command_module(name)
            if module is not None:
                module.register(sub)  # type: ignore[attr-defined]
            continue
        if _module_exists(name):
            sub.add_parser(name, help=COMMANDS[name], add_help=False)
    return parser


def _module_exists(name: str) -> bool:
    """Whether ``designer.commands.<name>`` can be imported, found without importing it."""
    import importlib.util

    return importlib.util.find_spec(f"designer.commands.{name}") is not None


def build_gui_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpu-designer", description="Open the designer window.")
    parser.add_argument("file", nargs="?", help="design file to open (default: the example design)")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="render the main window with FILE loaded to a PNG, offscreen, and exit")
    parser.add_argument("--size", default="1600x1000", help="window size for --screenshot (WxH)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


class Terminated(BaseException):
    """SIGTERM arrived (raised by :func:`console`'s handler, so that ``finally`` blocks run: a
    temporary output file is removed as on Ctrl-C)."""


def main(argv: list[str] | None = None, *, window: bool = False) -> int:
    """Run one command line; return its exit code. Everything printed meanwhile goes through
    :func:`designer.console.console_streams`. ``window``: the line is the window's only
    (``dpu-designer-gui [FILE]``), never a sub-command."""
    with console_streams():
        return _main(list(sys.argv[1:] if argv is None else argv), window)


def _main(argv: list[str], window: bool = False) -> int:
    try:
        if not window and (argv and argv[0] in COMMANDS or (argv and argv[0] in ("-h", "--help"))):
            parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
            args = parser.parse_args(argv)
            if not getattr(args, "func", None):
                parser.print_help()
                return 2
            return int(args.func(args) or 0)
        args = build_gui_parser().parse_args(argv)
        from designer.gui.app import run_gui  # Qt is imported only when the window is wanted

        return int(run_gui(args.file, screenshot=args.screenshot, size=args.size) or 0)
    except UsageError as exc:
        print(f"error: {shown(exc)}", file=sys.stderr)
        return 2
    except ResultError as exc:
        print(f"error: {shown(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the output cannot be written (a full disk...): one line, not a traceback
        _say_unwritable(exc)
        return 1


def _say_unwritable(exc: OSError) -> None:
    """``error: cannot write ...: <why>`` on stderr, when there is a stderr to write to."""
    what = f"cannot write {shown(exc.filename)}" if exc.filename else "cannot write the output"
    try:
        print(f"error: {what}: {exc.strerror or exc}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _terminate(signum, frame) -> None:
    raise Terminated()


def console() -> None:
    """The ``dpu-designer`` program (console script, ``python -m designer``): :func:`main` in a
    process of its own, then its exit code.

    Two steps that belong to a process of its own, not to :func:`main` (which tests and other
    programs call): for a headless command, SIGTERM raises :class:`Terminated` (exit 143) so that
    a terminated run removes its temporary output file as an interrupted one does (the window
    keeps Qt's handling); and at the end the output is flushed here, so that a reader gone away
    (``| head``) is not an error and a full disk is one line and exit 1, not Python's "Exception
    ignored" at interpreter exit; a command whose standard output is closed exits 1."""
    argv = sys.argv[1:]
    headless = bool(argv) and argv[0] in COMMANDS
    if headless:
        with contextlib.suppress(ValueError, OSError):  # not in the main thread: leave it
            signal.signal(signal.SIGTERM, _terminate)
    code = main(argv)
    if headless and code == 0 and real(sys.stdout) is None:
        # closed (``>&-``): what the command printed went nowhere, which is no success
        with contextlib.suppress(OSError, ValueError, AttributeError):
            print("error: standard output is closed (>&-), so the command's output was lost; "
                  "send it to a file (> out.txt) or to /dev/null", file=sys.stderr, flush=True)
        code = 1
    sys.exit(_flushed(code))


def gui() -> None:
    """The ``dpu-designer-gui`` program (``[project.gui-scripts]``, the desktop entry
    ``resources/dpu-designer.desktop``): the window on ``[FILE]``, never a sub-command (a file
    named ``run`` opens that file), and on Windows without a console window."""
    sys.exit(_flushed(main(sys.argv[1:], window=True)))


def _flushed(code: int) -> int:
    """Flush stdout and stderr as Python's own ending would, reporting instead of raising: a
    reader gone away is not an error (as in :func:`main`), another failure is one line and code
    1. A stream that failed is pointed at /dev/null so that the interpreter's last flush is quiet."""
    for name in ("stdout", "stderr"):
        stream = real(getattr(sys, name))
        if stream is None:  # closed (``>&-``)
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            _silence(stream)
        except (OSError, ValueError) as exc:
            _silence(stream)
            if name == "stdout" and isinstance(exc, OSError):
                _say_unwritable(exc)
            code = code or 1
    return code


def _silence(stream) -> None:
    """Point the descriptor under ``stream`` at /dev/null (what is left in its buffer goes
    nowhere, quietly)."""
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    console()
