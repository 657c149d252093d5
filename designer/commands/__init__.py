"""CLI sub-commands: one module each, exposing ``register(subparsers)``.

A module's ``register`` adds its sub-parser with ``help=COMMANDS[name]`` and sets ``func=run``
with ``run(args) -> int``. :data:`COMMANDS` is the one place the help lines live: ``dpu-designer
--help`` lists them without importing any command module (their imports take half a second:
numpy, the engine), and ``tests/test_cli_commands_table.py`` checks that every module registers
its command with this text.
"""

#: sub-command name -> its one-line help, in the order ``--help`` lists them (a name whose module
#: does not exist yet is skipped)
COMMANDS: dict[str, str] = {
    "new": "generate a design from a template",
    "validate": "check a design file",
    "catalog": "list hardware and workload catalog entries",
    "run": "predict iteration time, throughput and bottlenecks of a design",
    "plan": "search TP/PP/DP/CP/EP, micro-batch, interleave and recompute for the fastest layout "
            "that fits in GPU memory",
    "collective": "nccl-tests-style table of one collective on the fabric",
    "compare": "the design host-managed vs SmartNIC vs DPU-offloaded, side by side",
    "sweep": "training time and MFU against one design parameter, host vs SmartNIC vs DPU, on all cores or a Dask cluster",
    "cost": "bill of materials with prices, CapEx, TCO, tokens per dollar/kW/rack unit, DPU payback",
    "optimize": "search designs for a target (workload, GPUs, days, budget): Pareto front of cost, time, energy",
    "report": "write the design report (PDF, optionally PNG figures)",
    "export": "cabling plan and bill of materials (CSV), rack elevation (SVG/PNG)",
    "schema": "print the JSON Schema of the design file format",
}
