"""Workload formulas and collective cost models against published figures."""

import json
from pathlib import Path

import pytest

from designer.engine import collectives as coll
from designer.engine import workload as W
from designer.errors import UsageError

DATA = Path(__file__).parent / "data"
TABLE1 = json.loads((DATA / "megatron_table1.json").read_text())
NCCL = json.loads((DATA / "nccl_reference.json").read_text())


def _row(i):
    cols = TABLE1["columns"]
    return dict(zip(cols, TABLE1["rows"][i]))


@pytest.mark.parametrize("i", range(10))
def test_parameter_count_matches_table1(i):
    r = _row(i)
    w = W.from_dict(dict(layers=r["layers"], hidden=r["hidden"], heads=r["heads"], tp=r["tp"],
                         pp=r["pp"], global_batch=r["global_batch"]), r["gpus"])
    assert W.parameters(w) / 1e9 == pytest.approx(r["params_B"], rel=0.03)


# Narayanan et al. SC'21 §5.1 (B=4, s=32, l=2, h=64, V=1000): with recomputation
# 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)); without it every layer costs 3 forwards instead of 4 while
# the logit layer still costs 3: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
FLOPS_96 = 96 * 4 * 32 * 2 * 64 ** 2 * (1 + 32 / (6 * 64) + 1000 / (16 * 2 * 64))
FLOPS_72 = 72 * 4 * 32 * 2 * 64 ** 2 * (1 + 32 / (6 * 64) + 1000 / (12 * 2 * 64))


def test_flops_formula_with_and_without_recompute():
    w = W.Workload(layers=2, hidden=64, heads=4, vocab=1000, seq_len=32, dp=1, global_batch=4)
    assert W.model_flops_per_iteration(w) == pytest.approx(FLOPS_96)
    assert W.model_flops_per_iteration(w, recompute=False) == pytest.approx(FLOPS_72)
    no_rc = W.Workload(**{**w.to_dict(), "recompute": False})
    assert W.model_flops_per_iteration(no_rc) == pytest.approx(FLOPS_72)
    assert FLOPS_72 > 0.75 * FLOPS_96  # the 72-vs-96 rule undercounts the logit layer


def test_mfu_divides_model_flops_without_recompute():
    from designer.engine.pipeline import run
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    cat = load_catalog()
    r = run(rail_optimized(servers=4, server="dgx-a100", catalog=cat), cat, workload="megatron-gpt-1.7b")
    assert r.workload["recompute"]
    l, h, s, V = 24, 2304, 2048, 51200  # Megatron Table 1, 1.7B row
    ratio = 72 * (1 + s / (6 * h) + V / (12 * l * h)) / (96 * (1 + s / (6 * h) + V / (16 * l * h)))
    assert r.mfu / (r.percent_of_peak / 100) == pytest.approx(ratio)


def test_flash_attention_drops_the_score_matrix_from_stored_activations():
    # s=32, b=2, h=64, a=4, t=2: Korthikanti eq. 2 = s·b·h·(10 + 24/t + 5·a·s/(h·t)) = 4096·(10+12+5)
    w = W.Workload(layers=2, hidden=64, heads=4, seq_len=32, tp=2, micro_batch=2, dp=1, global_batch=4)
    assert W.activation_bytes_per_layer(w) == pytest.approx(4096 * 27)
    # without the s×s terms, plus one fp32 log-sum-exp per head and token: 4·a·s·b/t = 4·4·32·2/2 = 512 bytes
    fa = W.Workload(**{**w.to_dict(), "flash_attention": True})
    assert W.activation_bytes_per_layer(fa) == pytest.approx(4096 * 22 + 512)


def test_flash_attention_must_be_a_boolean():
    with pytest.raises(UsageError, match="'flash_attention' must be true or false"):
        W.from_dict(dict(heads=16, flash_attention="yes"), 8)


@pytest.mark.parametrize("est", TABLE1["training_time_estimates"])
def test_training_time_eq4_reproduces_worked_estimates(est):
    days = W.training_time_s(est["tokens"], est["params"], est["gpus"], est["tflops_per_gpu"]) / 86400
    assert days == pytest.approx(est["days"], rel=0.05)


def test_training_time_without_recompute_counts_six_flops_per_parameter_and_token():
    # 1e12 tokens x 1e9 parameters x 6 FLOPs / (1000 GPUs x 100 TFLOP/s) = 6e4 s (8e4 with recompute)
    assert W.training_time_s(1e12, 1e9, 1000, 100.0, recompute=False) == pytest.approx(6e4)
    assert W.training_time_s(1e12, 1e9, 1000, 100.0, recompute=True) == pytest.approx(8e4)


def test_bubble_shrinks_with_interleaving():
    w1 = W.Workload(pp=8, dp=1, interleave=1)
    w2 = W.Workload(pp=8, dp=1, interleave=2)
    assert W.bubble_s(w1, 1.0) == pytest.approx(7.0)
    assert W.bubble_s(w2, 1.0) == pytest.approx(3.5)


def test_bad_workload_is_a_usage_error():
    with pytest.raises(UsageError, match="global batch"):
        W.from_dict(dict(tp=8, global_batch=100, micro_batch=1, heads=16), 64)
    with pytest.raises(UsageError, match="needs more GPUs"):
        W.from_dict(dict(tp=8, pp=4), 16)
    with pytest.raises(UsageError, match="precision must be one of"):
        W.from_dict(dict(precision=[1]), 8)


H100 = NCCL["h100_nvswitch_allreduce"]


def _h100_node(nvls=True):
    return coll.GroupShape(ranks=H100["gpus"], nodes=1, nvlink_GBps=H100["nvlink_GBps_per_direction"],
                           nvswitch=True, nvls=nvls)


def test_h100_nvls_allreduce_busbw():
    c = coll.best("allreduce", 8 * 2 ** 30, _h100_node())
    assert c.algorithm == "nvls"
    assert c.busbw_GBps == pytest.approx(H100["nvls_busbw_GBps"], rel=0.05)


def test_h100_ring_allreduce_busbw_without_nvls():
    c = coll.best("allreduce", 8 * 2 ** 30, _h100_node(nvls=False))
    assert c.algorithm == "ring"
    assert c.busbw_GBps == pytest.approx(H100["ring_busbw_GBps"], rel=0.05)


def test_ndr_nic_busbw_across_servers():
    ref = NCCL["ndr_nic"]
    line = ref["line_Gbps"] / 8
    g = coll.GroupShape(ranks=16, nodes=16, nvlink_GBps=450, net_GBps=line * coll.NET_EFFICIENCY,
                        net_line_GBps=line)
    c = coll.best("allreduce", 8 * 2 ** 30, g, ("ring",))
    assert ref["busbw_min_GBps"] <= c.busbw_GBps <= ref["busbw_max_GBps"]


def _rail(n, depth, sharp=True):
    return coll.GroupShape(ranks=n, nodes=n, nvlink_GBps=450, net_GBps=46.875, net_line_GBps=50,
                           sharp=sharp, tree_depth=depth, switch_latency_us=0.13)


def test_sharp_reaches_link_rate_and_latency_follows_depth_not_n():
    big = coll.cost("allreduce", 8 * 2 ** 30, _rail(64, 2), "sharp")
    assert big.algbw_GBps == pytest.approx(46.875, rel=0.02)  # each NIC sends S once: link rate
    ring = coll.cost("allreduce", 8 * 2 ** 30, _rail(64, 2), "ring")
    assert big.time_s < ring.time_s
    t_small = {n: coll.cost("allreduce", 8, _rail(n, 2), "sharp").time_s for n in (4, 64, 1024)}
    assert t_small[4] == pytest.approx(t_small[1024])
    assert coll.cost("allreduce", 8, _rail(64, 3), "sharp").time_s > t_small[64]
    ring_small = [coll.cost("allreduce", 8, _rail(n, 2), "ring", "ll").time_s for n in (4, 64)]
    assert ring_small[1] > ring_small[0]


def test_small_messages_pick_low_latency_protocol():
    g = _rail(64, 2, sharp=False)
    small = coll.best("allreduce", 1024, g)
    assert small.protocol == "ll" or small.algorithm == "tree"
    assert coll.best("allreduce", 2 ** 31, g).protocol == "simple"


@pytest.mark.parametrize("op,factor", [("allreduce", 2 * 7 / 8), ("reduce_scatter", 7 / 8),
                                       ("allgather", 7 / 8), ("broadcast", 1.0)])
def test_busbw_definition(op, factor):
    c = coll.best(op, 2 ** 30, _h100_node())
    assert c.busbw_GBps == pytest.approx(c.algbw_GBps * factor)


@pytest.mark.parametrize("nodes,per_node,sharp", [(1, 8, False), (4, 8, True), (16, 1, True),
                                                   (32, 4, False)])
@pytest.mark.parametrize("size", [8, 65536, 2 ** 26, 2 ** 33])
def test_allreduce_never_beats_lower_bound(nodes, per_node, sharp, size):
    g = coll.GroupShape(ranks=nodes * per_node, nodes=nodes, nvlink_GBps=450, nvswitch=True,
                        nvls=True, net_GBps=46.875, net_line_GBps=50, nics_per_node=per_node,
                        sharp=sharp, tree_depth=2)
    c = coll.best("allreduce", size, g)
    assert c.time_s >= coll.allreduce_lower_bound_s(size, g)
