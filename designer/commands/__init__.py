"""CLI sub-commands: one module each, exposing ``register(subparsers)``.

A module's ``register`` adds its sub-parser and sets ``func=run`` with ``run(args) -> int``.
"""

#: sub-command modules, in the order ``--help`` lists them
COMMANDS = ("new", "validate", "catalog", "run", "plan", "collective", "compare", "sweep", "cost", "optimize",
            "report", "export", "schema")
