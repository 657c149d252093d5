"""Hold-out runs on A100 the engine was not tuned to (review of issue 12, finding 1), against
their publications (tests/data/holdouts_h2c.json, sources there). Band ±10%, as for the A100
Table 1 rows. A row outside the band is marked xfail with its gap explained by its parts."""

import json
from pathlib import Path

import pytest

from designer.engine.pipeline import run
from designer.topology.catalog import load_catalog
from engine_fixtures import cluster

REF = json.loads((Path(__file__).parent / "data" / "holdouts_h2c.json").read_text())
CAT = load_catalog()
BAND = 0.10


def _design(net: dict):
    return cluster(net["servers"], server_model="dgx-a100", nic_Gbps=net["nic_Gbps"], switch_model="qm8700",
                   servers_per_leaf=20, spines=20)


GAP_530B = ("-14%, two parts: (1) the engine's own -7% on SC'21 Table 1's 530B row (151 vs 163 TFLOP/s, "
            "same model, TP 8 x PP 35, interleave 3, same Selene cluster; test_530b_hardware_rate_is_table_1s); "
            "(2) the 2022 run's full-recomputation MFU of 42.1% is, by the engine's own FLOP count, 175 "
            "hardware TFLOP/s, 7% above Table 1's 163 for the same model and cluster a year earlier, a "
            "software gain no part of the engine tells apart (same shapes, layout, fabric): 0.93/1.07 = "
            "0.86. The parts of the prediction: compute 82%, TP all-reduces 5-6%, pipeline sends 4-5% "
            "(charged without overlap), stragglers 4%. The speed-up of selective over full recomputation "
            "is reproduced (test_selective_recompute_gains_what_the_paper_reports). Not a FLOP-count "
            "difference: the engine's MFU divides the paper's own model FLOPs, 72*B*s*l*h^2*(1 + s/6h + "
            "V/12hl) = 1.482e19 per iteration (logits and the s/6h attention term included; "
            "test_530b_mfu_counts_the_papers_model_flops), so the gap is time: 42.1% and 54.2% are 50.4 s "
            "and 39.1 s per iteration on 2,240 x 312 TFLOP/s, the engine 58.4 s and 45.6 s. Part (1) is one end of a trend over SC'21 Table 1, not a 530B "
            "fault: the engine's error runs with model size, +8% (1.7B), +2% (7.5B), -3% (146B, 310B), -7% "
            "(530B), -11% (1T), so a sourced correction would be a GEMM rate that rises with h (and a "
            "straggler share that does not, 2.6% to 4.4%) across every row, not a 530B constant")


#: BLOOM is inside the band since its pipeline split is expressed (embedding_in_pipeline_split):
#: it was -11% with the last stage charged 6 layers and the output layer, where the run's
#: --pp-partition-method 'type:transformer|embedding' gives it 5 and the output layer
BLOOM_PARTS = ("+2%: compute 82% of the iteration at the Table 1 A100 rate (the last stage 5 layers and "
               "the 250k-vocabulary output layer, as its partition method splits 70 layers + 2 embeddings "
               "into 12 x 6), bubble 7.5% (pp 12 over 128 micro-batches), stragglers 4%, TP 3%, DP 2%; its "
               "Omni-Path fabric (4 x 100 Gb/s per node) is drawn as eight 50 Gb/s InfiniBand rails")


def bloom():
    e = REF["bloom_176b"]
    r = run(_design(e["network"]), CAT, workload=dict(e["workload"]),
            scenario={"routing": "adaptive", "checkpoint_interval_s": 0})
    return r.tflops_per_gpu, e["published_tflops_per_gpu"], r


def korthikanti(mode: str):
    e = REF["korthikanti_530b"]
    spec = dict(e["workload"])
    if mode == "selective":
        spec.update(recompute_granularity="selective", sequence_parallel=True)
    r = run(_design(e["network"]), CAT, workload=spec, scenario={"routing": "adaptive", "checkpoint_interval_s": 0})
    return 100 * r.mfu, e["published_mfu_percent"][mode], r


RUNS = {"bloom-176b-384": bloom, "530b-selective-2240": lambda: korthikanti("selective"),
        "530b-full-2240": lambda: korthikanti("full")}


def _parts(r) -> dict:
    return {k: round(v / r.iteration_time_s, 3) for k, v in r.breakdown_s.items() if v}


def test_bloom_176b_tflops():
    got, ref, r = bloom()
    assert r.gpus == 384
    assert abs(got / ref - 1) <= BAND, f"{got:.1f} vs {ref} TFLOP/s ({_parts(r)}; {BLOOM_PARTS})"


def test_bloom_error_is_the_one_explained():
    """The case sits where BLOOM_PARTS says (±3 points): a change that moves it must say why."""
    got, ref, _ = bloom()
    want = float(BLOOM_PARTS.split("%")[0]) / 100
    assert got / ref - 1 == pytest.approx(want, abs=0.03)


def test_blooms_partition_gives_the_output_layer_a_layer_slot():
    """The part that was wrong: BLOOM's run (bigscience tr11-176B-ml.slurm, --pp-partition-method
    'type:transformer|embedding') counts the embedding and the tied output layer as layers of the
    first and last stage, 72 over 12 stages: the last GPU runs 5 layers and the output layer. Its
    output layer (3 units of 2·tokens·V·h/tp, never recomputed) weighs about one recomputed layer
    here, so the busiest GPU's micro-batch is 5 layers + the output layer, one layer less than
    the engine's default (6 + the output layer): each per-layer part x 5/6, the output layer kept."""
    from dataclasses import replace

    from designer.engine import workload as W

    w = W.Workload(**REF["bloom_176b"]["workload"])
    assert w.embedding_in_pipeline_split and w.stage_layers == 6
    a100 = CAT.get("gpu", CAT.get("server", "dgx-a100")["gpu_model"])
    split, plain = W.compute(w, a100), W.compute(replace(w, embedding_in_pipeline_split=False), a100)
    layer = (plain.gemm_s - plain.logit_s + plain.memory_s) / 6
    assert W.output_layer_slot(w, layer, plain.logit_s) == "layer"
    assert split.logit_s == plain.logit_s
    assert split.linear_s == pytest.approx(plain.linear_s * 5 / 6)
    assert split.micro_batch_s == pytest.approx(plain.micro_batch_s - layer)
    assert split.backward_s == pytest.approx(plain.backward_s - (plain.backward_s - plain.logit_s * 2 / 3) / 6)
    # without a pipeline, or off, nothing changes
    one = replace(w, pp=1, dp=96)
    assert W.compute(one, a100).micro_batch_s == W.compute(replace(one, embedding_in_pipeline_split=False), a100).micro_batch_s
    # a light output layer: a middle GPU's 6 layers are the busiest, the output layer is off the path
    small = replace(w, vocab=32000)
    s, p = W.compute(small, a100), W.compute(replace(small, embedding_in_pipeline_split=False), a100)
    assert s.logit_s == 0 and s.micro_batch_s == pytest.approx(p.micro_batch_s - p.logit_s)


@pytest.mark.xfail(strict=False, reason=GAP_530B)
def test_530b_selective_mfu():
    got, ref, r = korthikanti("selective")
    assert r.gpus == 2240
    assert abs(got / ref - 1) <= BAND, f"{got:.1f} vs {ref} % MFU ({_parts(r)})"


@pytest.mark.xfail(strict=False, reason=GAP_530B)
def test_530b_full_recompute_mfu():
    got, ref, r = korthikanti("full")
    assert abs(got / ref - 1) <= BAND, f"{got:.1f} vs {ref} % MFU ({_parts(r)})"


def test_selective_recompute_gains_what_the_paper_reports():
    """The paper's speed-up of selective over full recomputation, 54.2 / 42.1 = 1.29, comes from
    not re-running the layers' GEMMs (a third of their time with recomputation) and shorter
    activations: the engine's ratio lies between 1.15 and 1.40."""
    sel, _, _ = korthikanti("selective")
    full, _, _ = korthikanti("full")
    assert 1.15 < sel / full < 1.40


def test_530b_mfu_counts_the_papers_model_flops():
    """The hold-out's gap is not a different FLOP count: the engine's MFU for the 530B run divides
    Korthikanti et al.'s model FLOPs, 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) (no recomputation
    counted; logits and the attention-score term included), written out here from the paper's
    shape, by 2,240 GPUs x the A100's 312 TFLOP/s bf16 peak (datasheet) x the iteration time. The
    published MFUs therefore stand for iteration times (50.4 s full, 39.1 s selective) that the
    engine's (58.4 s, 45.6 s) are compared with directly."""
    e = REF["korthikanti_530b"]["workload"]
    B, s, l, h, V = e["global_batch"], e["seq_len"], e["layers"], e["hidden"], e["vocab"]
    paper_flops = 72 * B * s * l * h ** 2 * (1 + s / (6 * h) + V / (12 * l * h))
    for mode in ("full", "selective"):
        mfu, published, r = korthikanti(mode)
        assert mfu / 100 * r.gpus * 312e12 * r.iteration_time_s == pytest.approx(paper_flops, rel=1e-3)


def test_530b_hardware_rate_is_table_1s():
    """GAP_530B's decomposition, from the engine's own figures: with full recomputation its 530B
    runs at the hardware rate it predicts for SC'21 Table 1's 530B row (same shape and layout,
    2,520 GPUs there) within 2%; the published 42.1% MFU is, by the engine's ratio of hardware to
    model FLOPs, about 175 TFLOP/s, 7% above Table 1's 163."""
    table1 = json.loads((Path(__file__).parent / "data" / "megatron_table1.json").read_text())
    row = dict(zip(table1["columns"], next(v for v in table1["rows"] if v[0] == "megatron-gpt-529.6b")))
    d = cluster(row["gpus"] // 8, server_model="dgx-a100", nic_Gbps=200, switch_model="qm8700",
                servers_per_leaf=20, spines=20)
    t1 = run(d, CAT, workload=row["catalog_id"], micro_batch=row["micro_batch"], interleave=row["interleave"],
             scenario={"routing": "adaptive", "checkpoint_interval_s": 0})
    mfu, published, full = korthikanti("full")
    assert full.tflops_per_gpu == pytest.approx(t1.tflops_per_gpu, rel=0.02)
    assert t1.tflops_per_gpu / row["tflops_per_gpu"] - 1 == pytest.approx(-0.07, abs=0.02)
    published_hw = published / mfu * full.tflops_per_gpu
    assert published_hw / row["tflops_per_gpu"] - 1 == pytest.approx(0.074, abs=0.02)
    assert (t1.tflops_per_gpu / row["tflops_per_gpu"]) / (published_hw / row["tflops_per_gpu"]) == pytest.approx(
        mfu / published, rel=0.02)
