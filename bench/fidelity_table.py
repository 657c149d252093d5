"""The engine against published runs: one row per case (published figure, the engine's, error),
from the cited data files of ``tests/data`` (their sources are there and in the row's "source").
Issue #22: the README's fidelity table is this script's output, not typed by hand.

    PYTHONPATH=. python bench/fidelity_table.py            # print the table (Markdown)
    PYTHONPATH=. python bench/fidelity_table.py --readme README.md   # rewrite its table

Every case runs the engine as a user would (``pipeline.run`` on a drawn design, or the
collective cost model on the communicator the case describes). Fitted to rows of this table,
and labelled so where they appear, are: ``collectives.NVLS_BUSBW_CAP_GBPS[5]`` (830 GB/s, the
8x B200 measurement: that row is its calibration point, not a check; the GB200 NVL72 row checks
it) and ``workload.MOE_SYNC_HOST_S`` / ``MOE_GRAPHABLE_HOST_S`` (calibrated on the Megatron-LM
GB200 DeepSeek-V3 study, docs/discussions/deepseek-v3-gb200-optimization, 2025-11; the
Megatron-Bridge DeepSeek-V3 rows charge them). Nothing else is fitted to a row. The "parts"
column gives the prediction's breakdown (share of the iteration) so that each row can be
explained by its printed parts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
START, END = "<!-- fidelity-table:start -->", "<!-- fidelity-table:end -->"


def _load(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text())


def _parts(r) -> str:
    """The largest breakdown parts of a result as shares of its iteration."""
    items = sorted(((v / r.iteration_time_s, k) for k, v in r.breakdown_s.items() if v > 0), reverse=True)
    return ", ".join(f"{k} {share:.0%}" for share, k in items[:4])


def _row(case: str, source: str, unit: str, published: float, predicted: float, parts: str = "") -> dict[str, Any]:
    return {"case": case, "source": source, "unit": unit, "published": published, "predicted": predicted,
            "error": predicted / published - 1.0, "parts": parts}


#: the row whose measurement sets ``NVLS_BUSBW_CAP_GBPS[5]``: it reproduces its own input
B200_CALIBRATION = "All-reduce 8x B200 (NVLS): calibration point of the NVLink 5 ceiling, not a check"
#: what the rows that charge host-bound MoE time add to their source
HOST_CALIBRATION = "; its host-bound MoE time calibrated on the Megatron-LM GB200 DeepSeek-V3 study"


def collective_rows() -> list[dict[str, Any]]:
    """All-reduce bus bandwidth of one communicator (nccl-tests busbw at 4-8 GB)."""
    from designer.engine import collectives as coll

    bw = _load("nccl_blackwell.json")
    h = _load("nccl_reference.json")
    big = 8 * 2 ** 30

    def domain(n: int, nvlink: float) -> coll.GroupShape:
        return coll.GroupShape(ranks=n, nodes=1, nvlink_GBps=nvlink, nvswitch=True, nvls=True)

    def nodes(n: int, per: int, nvlink: float, line_Gbps: float) -> coll.GroupShape:
        line = line_Gbps / 8
        return coll.GroupShape(ranks=n * per, nodes=n, nvlink_GBps=nvlink, nvswitch=True, nvls=True,
                               net_GBps=line * coll.NET_EFFICIENCY, net_line_GBps=line, nics_per_node=per)

    cases: list[tuple[str, str, float, coll.GroupShape]] = [
        ("All-reduce 8x H100 (NVLS)", "DGX H100 nccl-tests (nccl_reference.json)",
         h["h100_nvswitch_allreduce"]["nvls_busbw_GBps"], domain(8, 450)),
        ("All-reduce 2x 8 H100, 8x400G (NVLSTree)", "NVIDIA/nccl#1221",
         h["h100_8x400g_multinode"]["nvls_tree_2node_busbw_GBps"], nodes(2, 8, 450, 400)),
        (B200_CALIBRATION, "NVIDIA/nccl#1807", bw["b200_8gpu_allreduce"]["busbw_GBps"], domain(8, 900)),
        ("All-reduce GB200 NVL72, 72 GPUs (checks the NVLink 5 ceiling)", "coreweave/nccl-tests PR #43",
         bw["gb200_nvl72_allreduce"]["busbw_GBps"], domain(72, 900)),
        ("All-reduce 2x 8 B200, 8x400G", "coreweave/nccl-tests PR #92",
         bw["b200_2node_allreduce"]["busbw_GBps"], nodes(2, 8, 900, 400)),
    ]
    out = []
    for name, source, published, g in cases:
        c = coll.best("allreduce", big, g)
        out.append(_row(name, source, "busbw GB/s", published, c.busbw_GBps, c.algorithm))
    return out


def nemo_rows() -> list[dict[str, Any]]:
    """NeMo 24.07 DGX-H100 FP8 pre-training rows (tokens/s per GPU), NeMo's overlap settings."""
    sys.path.insert(0, str(ROOT / "tests"))
    import test_engine_nemo as nemo  # type: ignore[import-not-found]  # the rows as the acceptance test builds them

    from designer.engine.pipeline import run
    from designer.topology.templates import rail_optimized

    out = []
    for row in nemo.ROWS:
        if row["cp"] > 1 and not nemo.CP_READY:
            continue
        design = rail_optimized(servers=max(1, row["gpus"] // 8), server="dgx-h100", catalog=nemo.CAT,
                                storage="none")
        r = run(design, nemo.CAT, workload=nemo.spec(row), scenario={"checkpoint_interval_s": 0})
        out.append(_row(f"NeMo FP8 {row['model']} on {row['gpus']} H100", "NeMo 24.07 performance summary",
                        "tokens/s/GPU", row["tokens_per_s_per_gpu"], r.tokens_per_s / r.gpus, _parts(r)))
    return out


def moe_bridge_run(key: str):
    """The engine's run of one Megatron-Bridge 25.09 DeepSeek-V3 case (tests/data/moe_megatron_bridge.json)."""
    from designer.engine.pipeline import run
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    cat = load_catalog()
    ref = _load("moe_megatron_bridge.json")
    model = {k: v for k, v in _load("moe_reference.json")["deepseek_v3"]["workload"].items()
             if k not in ("gpus", "gpu_model", "tokens_B", "id", "name", "source")}
    case = ref["cases"][key]
    design = rail_optimized(servers=case["servers"], server=case["server"], gpus_per_server=case["gpus_per_server"],
                            catalog=cat, storage="none")
    wl = {**model, **ref["common"], **case["workload"]}
    wl["dp"] = case["servers"] * case["gpus_per_server"] // (wl["tp"] * wl["pp"])
    return run(design, cat, workload=wl, placement="tp,dp,pp", scenario={"checkpoint_interval_s": 0}), case


def moe_rows() -> list[dict[str, Any]]:
    """Mixture-of-experts runs: Megatron-Bridge's DeepSeek-V3 tables, the DeepSeek-V3 report and
    Mixtral (tests/data/moe_reference.json)."""
    from designer.engine import workload as W
    from designer.engine.pipeline import run
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    out = []
    cat = load_catalog()
    for key in ("h100", "b200", "gb200"):
        r, case = moe_bridge_run(key)
        gpu = cat.get("gpu", cat.get("server", case["server"])["gpu_model"])
        ct = W.compute(W.Workload(**r.workload), gpu)
        inside = f" (of it host-bound MoE launches {ct.host_s / ct.micro_batch_s:.0%})" if ct.host_s else ""
        parts = _parts(r).replace("compute " + f"{r.breakdown_s['compute'] / r.iteration_time_s:.0%}",
                                  "compute " + f"{r.breakdown_s['compute'] / r.iteration_time_s:.0%}{inside}", 1)
        source = "Megatron-Bridge 25.09 performance summary" + (HOST_CALIBRATION if ct.host_s else "")
        out.append(_row(f"DeepSeek-V3 FP8 on {r.gpus} {case['system']}", source,
                        "tokens/s/GPU", case["published_tokens_per_s_per_gpu"], r.tokens_per_s / r.gpus, parts))
    ref = _load("moe_reference.json")
    r = run(rail_optimized(servers=256, server="dgx-h100", catalog=cat), cat, workload=dict(ref["deepseek_v3"]["workload"]),
            placement="tp,dp,pp", scenario={"checkpoint_interval_s": 0})
    out.append(_row("DeepSeek-V3 on 2,048 H800 (as H100)", "DeepSeek-V3 report, Table 1", "tokens/s/GPU",
                    ref["deepseek_v3"]["published_tokens_per_s_per_gpu"], r.tokens_per_s / r.gpus, _parts(r)))
    r = run(rail_optimized(servers=8, server="dgx-h100", catalog=cat), cat, workload=dict(ref["mixtral_8x7b"]["workload"]),
            placement="tp,dp,pp", scenario={"checkpoint_interval_s": 0})
    w = W.Workload(**r.workload)
    tflops = W.model_flops_per_iteration(w, recompute=False) / r.iteration_time_s / r.gpus / 1e12
    out.append(_row("Mixtral 8x7B on 64 H100", "moe_reference.json (source there)", "model TFLOP/s/GPU",
                    ref["mixtral_8x7b"]["published_model_tflops_per_gpu"], tflops, _parts(r)))
    return out


def memory_parts_text(w) -> str:
    """The largest parts of a memory estimate (``workload.memory_parts``) in GB of 10^9 bytes."""
    from designer.engine import workload as W

    parts = W.memory_parts(w).to_dict()
    state = parts.pop("weights") + parts.pop("gradients") + parts.pop("optimizer")
    items = sorted(((v, k) for k, v in {"model state": state, **parts}.items() if v >= 0.05), reverse=True)
    return ", ".join(f"{k.replace('_', ' ')} {v:.1f} GB" for v, k in items[:4])


def memory_rows() -> list[dict[str, Any]]:
    """Memory per GPU against Megatron-LM's estimator (its formulas evaluated by hand; not a
    measurement): tests/data/megatron_memory.json; and against measured peaks (torchtitan's
    reserved-memory peaks of Llama 3.1 8B and 70B on H100, as its recipes run them: per-op
    recomputation, unfused fp32 loss, FSDP2): tests/data/torchtitan_memory.json. The parts column
    is the estimate's largest parts (``workload.memory_parts``)."""
    from designer.engine import workload as W

    ref = _load("megatron_memory.json")
    out = []
    for values in ref["rows"]:
        row = dict(zip(ref["columns"], values))
        w = W.Workload(**row["workload"])
        gb = W.memory_per_gpu_GB(w)
        if gb is None:
            continue
        got = gb * 1e9 / 2 ** 20
        out.append(_row(f"Memory/GPU {row['name'].split(',')[0]}", "Megatron-LM estimator (by hand)", "MiB",
                        row["total_MB"], got, memory_parts_text(w)))
    titan = _load("torchtitan_memory.json")
    for case in titan["cases"].values():
        w = W.Workload(**titan["workload"], dp=case["dp"], global_batch=case["global_batch"])
        out.append(_row(f"Memory/GPU Llama 3.1 8B FSDP {case['dp']} H100, 2x8192 tokens (measured reserved peak)",
                        f"torchtitan H100 benchmarks 2024-12, {case['table']}", "GiB", case["published_GiB"],
                        W.memory_per_gpu_GB(w) * 1e9 / 2 ** 30, memory_parts_text(w)))
    for case in titan["outside"].values():  # outside the band (tests/test_engine_memory.py: why)
        w = W.Workload(**case["workload"])
        out.append(_row(f"Memory/GPU Llama 3.1 70B FSDP 32 x TP 8 H100, 16x8192 tokens, full recompute (measured reserved peak)",
                        f"torchtitan H100 benchmarks 2024-12, {case['table']}", "GiB", case["published_GiB"],
                        W.memory_per_gpu_GB(w) * 1e9 / 2 ** 30,
                        memory_parts_text(w) + "; the allocator's reserve is not counted"))
    return out


SECTIONS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "collectives": collective_rows, "nemo": nemo_rows, "moe": moe_rows, "memory": memory_rows}


def rows(sections: tuple[str, ...] = tuple(SECTIONS)) -> list[dict[str, Any]]:
    return [r for s in sections for r in SECTIONS[s]()]


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| Case | Source | Published | Predicted | Error | Parts of the prediction |",
             "|---|---|---:|---:|---:|---|"]
    for r in table:
        lines.append(f"| {r['case']} | {r['source']} | {r['published']:,.0f} {r['unit']} | "
                     f"{r['predicted']:,.0f} | {r['error']:+.0%} | {r['parts']} |")
    return "\n".join(lines)


def write_readme(path: Path, text: str) -> None:
    """Replace the table between the README's fidelity markers (they must be there)."""
    doc = path.read_text()
    if START not in doc or END not in doc:
        raise SystemExit(f"{path}: no '{START}' ... '{END}' markers; add them where the table goes")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{START}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--readme", type=Path, help="rewrite the table in this README")
    p.add_argument("--only", choices=tuple(SECTIONS), action="append", help="only these sections")
    args = p.parse_args(argv)
    text = markdown(rows(tuple(args.only) if args.only else tuple(SECTIONS)))
    if args.readme:
        write_readme(args.readme, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
