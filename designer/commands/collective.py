"""``dpu-designer collective FILE``: an nccl-tests-style table for the drawn fabric."""

from __future__ import annotations

import math

from designer.commands.run import _positive_int, load_design
from designer.errors import UsageError

_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "M": 1024 ** 2, "MB": 1024 ** 2, "G": 1024 ** 3,
          "GB": 1024 ** 3}
#: largest size the table goes up to (1 TiB; nccl-tests' -e is of that order at most)
MAX_SIZE = 1024 ** 4


def register(subparsers) -> None:
    p = subparsers.add_parser("collective", help="nccl-tests-style table of one collective on the fabric",
                              description="Predict size/time/algbw/busbw of a collective on the drawn "
                                          "fabric, like nccl-tests' *_perf -b MIN -e MAX -f 2.")
    p.add_argument("file", help="design file (.json)")
    p.add_argument("--op", default="allreduce", type=op_name, metavar="OP",
                   help="collective, by the engine's or nccl-tests' name: allreduce (all_reduce), "
                        "reduce_scatter, allgather (all_gather), alltoall (all_to_all), broadcast, "
                        "sendrecv; default allreduce")
    p.add_argument("--min", default="8", help="smallest size (bytes, K, M, G suffixes; default 8)")
    p.add_argument("--max", default="8G", help="largest size (default 8G)")
    p.add_argument("--gpus", type=_positive_int, help="GPUs in the communicator (default: all)")
    p.add_argument("--algorithm", help="force one algorithm (ring, tree, hierarchical, nvls, sharp, "
                                       "nvls_tree, pairwise)")
    p.add_argument("--routing", choices=("ecmp", "adaptive"))
    p.set_defaults(func=run)


#: nccl-tests' names (all_reduce_perf, all_gather_perf, alltoall_perf ...) for the engine's ops
_OP_ALIASES = {"all_reduce": "allreduce", "all_gather": "allgather", "all_to_all": "alltoall",
               "reducescatter": "reduce_scatter", "send_recv": "sendrecv"}


def op_name(text: str) -> str:
    """The engine's name of a collective given as the engine or nccl-tests spells it."""
    key = text.strip().lower().replace("-", "_")
    op = _OP_ALIASES.get(key, key)
    from designer.engine import collectives as coll

    if op not in coll.OPS:
        raise UsageError(f"--op {text!r} is not a collective; use one of {', '.join(coll.OPS)} "
                         f"(or nccl-tests' all_reduce, all_gather, all_to_all)")
    return op


def _size(flag: str, text: str) -> int:
    """:func:`parse_size` of an option's value, its error naming the option."""
    try:
        return parse_size(text)
    except UsageError as exc:
        raise UsageError(f"{flag} {text}: {exc}") from None


def parse_size(text: str) -> int:
    t = text.strip().upper()
    num = t.rstrip("KMGB")
    try:
        value = float(num) * _UNITS[t[len(num):]]
        if math.isnan(value):
            raise ValueError(text)
    except (ValueError, KeyError):
        raise UsageError(f"size {text!r} is not a byte count like 8, 64K, 128M or 8G") from None
    if value > MAX_SIZE:
        raise UsageError(f"size {text!r} is beyond {MAX_SIZE // 1024 ** 4} TiB; give a size like 8G")
    if value < 1:
        raise UsageError(f"size {text!r} must be at least 1 byte")
    return int(value)


#: what each algorithm needs (the conditions of ``designer.engine.collectives``), for messages
_NEEDS = {
    "ring": "GPUs that reach each other over NVLink, PCIe or the network",
    "tree": "an all-reduce across two or more servers",
    "hierarchical": "an all-reduce across two or more servers with two or more GPUs each",
    "nvls": "an all-reduce whose GPUs all sit in one NVSwitch domain (one server) with NVLink 4 "
            "or newer (NVLink SHARP)",
    "sharp": "an all-reduce across two or more servers whose switches all reduce in-network (SHARP)",
    "nvls_tree": "an all-reduce across two or more servers with two or more GPUs each in an NVSwitch "
                 "domain with NVLink 4 or newer (NVLink SHARP inside, a tree between)",
    "pairwise": "an all-to-all (--op alltoall): every rank sends to every other rank at once",
}


def applicable(op: str, shape) -> list[str]:
    """The algorithms that can run ``op`` on the group (as the engine's cost model says)."""
    from designer.engine import collectives as coll

    return [a for a in coll.ALGORITHMS
            if any(coll.cost(op, 1.0, shape, a, p) is not None for p in coll.PROTOCOLS)]


def forced_problem(op: str, algorithm: str, shape) -> str | None:
    """Why ``--algorithm`` cannot run ``op`` on the group, or None (also None when no algorithm
    can: then the engine's message about the fabric applies)."""
    usable = applicable(op, shape)
    if algorithm in usable or not usable:
        return None
    where = f"{shape.ranks} GPUs on {shape.nodes} server{'s' if shape.nodes > 1 else ''}"
    if op == "alltoall":  # no reduction or ring order: none of the ring/tree algorithms runs it
        return (f"--algorithm {algorithm} does not apply to alltoall: an all-to-all is not a ring, "
                f"tree or in-network collective, every rank sends to every other rank at once; "
                f"use one of {', '.join(usable)}")
    return (f"--algorithm {algorithm} does not apply to {op} on {where}: it needs "
            f"{_NEEDS[algorithm]}; use one of {', '.join(usable)}")


def run(args) -> int:
    from designer.engine import collectives as coll
    from designer.engine.pipeline import group_shape_for
    from designer.topology.catalog import load_catalog, report_problems

    lo, hi = _size("--min", args.min), _size("--max", args.max)
    if lo > hi:
        raise UsageError(f"--min {args.min} is larger than --max {args.max}")
    if args.algorithm and args.algorithm not in coll.ALGORITHMS:
        raise UsageError(f"--algorithm must be one of {', '.join(coll.ALGORITHMS)}")
    design = load_design(args.file)
    scenario = {"routing": args.routing} if args.routing else {}
    catalog = load_catalog()
    report_problems(catalog)
    shape = group_shape_for(design, catalog, args.gpus, scenario=scenario)
    if shape.ranks < 2:
        where = "--gpus 1" if args.gpus else "the design has one GPU"
        raise UsageError(f"{where}: a collective on one GPU moves no data, so it takes no time and has "
                         f"no bandwidth to show; give --gpus 2 or more (a design with 2 or more GPUs)")
    allowed = (args.algorithm,) if args.algorithm else coll.ALGORITHMS
    problem = forced_problem(args.op, args.algorithm, shape) if args.algorithm else None
    if problem:
        raise UsageError(problem)
    print(f"# {args.op} on {shape.ranks} GPUs, {shape.nodes} servers "
          f"(rail rate {shape.net_GBps:.1f} GB/s per GPU after sharing)" if shape.nodes > 1 else
          f"# {args.op} on {shape.ranks} GPUs in one server")
    print(f"#{'size':>12} {'time(us)':>12} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12}  algorithm")
    size = lo
    while size <= hi:
        c = coll.best(args.op, float(size), shape, allowed)
        if not (c.time_s > 0 and math.isfinite(c.time_s)):  # the cost model has no time for it
            raise UsageError(f"{args.op} of {size} bytes on {shape.ranks} GPUs has no predicted time "
                             f"({c.algorithm}/{c.protocol}); check the fabric with 'dpu-designer validate'")
        print(f"{size:>13} {c.time_s * 1e6:12.2f} {c.algbw_GBps:12.2f} {c.busbw_GBps:12.2f}  "
              f"{c.algorithm}/{c.protocol}")
        size *= 2
    return 0

