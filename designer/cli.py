"""The ``dpu-designer`` command: the GUI by default, headless sub-commands otherwise.

``dpu-designer [FILE] [--screenshot OUT.png]`` opens the main window (on FILE, or on the embedded
example design). ``dpu-designer COMMAND ...`` runs a headless command (see ``--help``).
Exit codes: 0 success, 1 the command ran and found problems (``validate``), 2 bad input (one line on
stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys

from designer import __version__
from designer.commands import COMMANDS
from designer.errors import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as UsageError (so main() prints one line, exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


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


def _static_help(name: str) -> str | None:
    """The ``help=`` text a command module gives its sub-parser, read from its source without
    importing it (its imports may take half a second: numpy, scipy, the engine); None when the
    module is missing or the text is not a plain string there."""
    try:
        spec = importlib.util.find_spec(f"designer.commands.{name}")
    except ModuleNotFoundError:
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_parser" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == name:
            for kw in node.keywords:
                if kw.arg == "help":
                    try:
                        value = ast.literal_eval(kw.value)
                    except ValueError:
                        return None
                    return value if isinstance(value, str) else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser. ``only``: the sub-command about to run: only its module is imported and
    its sub-parser registered (its own usage, help and errors are all that parsing its line can
    print). ``only`` None (``dpu-designer --help``): every command gets a stand-in sub-parser with
    its help line (read from its module's source), so the list shows them all without importing
    the engine, numpy or Qt; ``"*"``: every command registered for real."""
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
        text = _static_help(name)
        if text is None:
            module = _command_module(name)  # help not in plain sight: ask the module itself
            if module is not None:
                module.register(sub)  # type: ignore[attr-defined]
            continue
        sub.add_parser(name, help=text, add_help=False)
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpu-designer", description="Open the designer window.")
    parser.add_argument("file", nargs="?", help="design file to open (default: the example design)")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="render the main window with FILE loaded to a PNG, offscreen, and exit")
    parser.add_argument("--size", default="1600x1000", help="window size for --screenshot (WxH)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in COMMANDS or (argv and argv[0] in ("-h", "--help")):
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
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the output cannot be written (a full disk...): one line, not a traceback
        _say_unwritable(exc)
        return 1


def _say_unwritable(exc: OSError) -> None:
    """``error: cannot write ...: <why>`` on stderr, when there is a stderr to write to."""
    what = f"cannot write {exc.filename}" if exc.filename else "cannot write the output"
    try:
        print(f"error: {what}: {exc.strerror or exc}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


#: glibc ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _keep_freed_memory() -> None:
    """Let glibc keep the memory a headless command frees, for its next allocations.

    By default glibc hands an allocation above its mmap threshold (128 KiB, raised to at most
    32 MiB as such blocks are freed) its own fresh pages from the kernel, and gives them back when
    it is freed; it also gives back the top of the heap once 128 KiB of it are free. The engine
    makes and drops numpy arrays of megabytes at every stage, the loader a file's bytes and the
    output its text: each new block is zero pages again, one page fault per 4 KiB. Raising both
    thresholds to 1 GiB makes freed blocks reusable in the process; the peak memory is the same
    (what is kept was in use before). Measured (``dpu-designer run --json``, GPT-3 175B TP 8 PP 8,
    getrusage at the end of the command): 131,072 GPUs, page faults 230k -> 166k, system time
    0.76-0.94 -> 0.45-0.53 s, peak RSS 659 -> 660 MB; 16,384 GPUs, 31.2k -> 22.9k faults.
    Only for a command's own short-lived process (:func:`console`): a long-lived process, the
    window, should give memory back. Silently nothing where the C library is not glibc."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30)
        libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    except (OSError, AttributeError):
        pass


def console() -> None:
    """The ``dpu-designer`` program (console script and ``python -m designer.cli``): :func:`main`
    in a process of its own. A headless command runs with :func:`_keep_freed_memory`, and once it
    is done its output is flushed and the process ends at once (``os._exit``): tearing down the
    interpreter would free every object of the design one by one, ~0.1-0.3 s of a 131k-GPU run,
    for memory the kernel takes back anyway. The window (Qt) and a run with other threads still
    alive end the usual way."""
    import os
    import threading

    argv = sys.argv[1:]
    headless = bool(argv) and argv[0] in COMMANDS
    if headless:
        _keep_freed_memory()
    code = main(argv)
    if not headless or "PySide6" in sys.modules or threading.active_count() > 1:
        sys.exit(code)
    # what Python's own ending does with the two streams: flush them (a closed one is None)
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: as main() does, not an error
        pass
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError):
            _say_unwritable(exc)
        code = code or 1
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    console()
