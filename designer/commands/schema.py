"""``dpu-designer schema [-o FILE]``: the JSON Schema of a design file.

Prints the schema that ``resources/schema/dpu-cluster-design.schema.json`` holds (its ``$id`` names
the format and version), or writes it to FILE atomically. It is made from the same table the
loader's decoder is made from (``designer.topology.fileformat.SCHEMA``), so any JSON Schema
validator checks a file's structure as the program does; the program's further checks (ids unique,
link ends that exist, props within each kind's ranges, design rules) are not part of it.

Exit 0; 2 when FILE cannot be written (one line: ``error: FILE: message``).
"""

from __future__ import annotations

import argparse

from designer.commands import COMMANDS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("schema", help=COMMANDS["schema"],
                              description="Print the JSON Schema of a design file (or write it with -o).")
    p.add_argument("-o", "--output", metavar="FILE", help="write the schema to FILE instead of printing it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from designer.topology import fileformat

    text = fileformat.schema_text()
    if args.output:
        from designer.safeio import atomic_write_text

        atomic_write_text(args.output, text, what="schema file")
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0
