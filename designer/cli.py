"""The ``dpu-designer`` command: the GUI by default, headless sub-commands otherwise.

``dpu-designer [FILE] [--screenshot OUT.png]`` opens the main window (on FILE, or on the embedded
example design). ``dpu-designer COMMAND ...`` runs a headless command (see ``--help``).
Exit codes: 0 success, 1 the command ran and found problems (``validate``), 2 bad input (one line on
stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from designer import __version__
from designer.commands import COMMANDS
from designer.errors import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as UsageError (so main() prints one line, exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _available_commands() -> dict[str, object]:
    mods = {}
    for name in COMMANDS:
        try:
            mods[name] = importlib.import_module(f"designer.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"designer.commands.{name}":
                raise
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpu-designer",
        description="Design GPU training clusters with DPUs and see what the design gives.",
        epilog="Without a command, opens the designer window (on FILE if given).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _available_commands().values():
        module.register(sub)  # type: ignore[attr-defined]
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
            parser = build_parser()
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
