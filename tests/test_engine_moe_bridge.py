"""Issue #22: DeepSeek-V3 pre-training on H100, B200 and GB200 against Megatron-Bridge's published
25.09 table (tests/data/moe_megatron_bridge.json: layouts and settings from the same release's
performance configs), and the MoE parts the engine charges for them.

Not fitted: GEMM rates from the catalog, the MoE permutation bytes counted from the dispatcher's
kernels (``workload.moe_memory_bytes``), the flex dispatcher's copies from balanced routing
(``traffic.remote_nodes_per_token``), 20 SMs for an overlapped dispatch (DeepSeek-V3 report)."""

import importlib.util
import math
from pathlib import Path

import pytest

from designer.engine import traffic as tr
from designer.engine import workload as W

_spec = importlib.util.spec_from_file_location("fidelity_table", Path(__file__).parents[1] / "bench" / "fidelity_table.py")
FT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FT)
REF = FT._load("moe_megatron_bridge.json")
BAND = 0.10  #: the issue's acceptance band
RUNS = {k: FT.moe_bridge_run(k)[0] for k in ("h100", "b200", "gb200")}


def _tps(key):
    return RUNS[key].tokens_per_s / RUNS[key].gpus


def _published(key):
    return REF["cases"][key]["published_tokens_per_s_per_gpu"]


@pytest.mark.parametrize("blackwell", ["b200", "gb200"])
def test_blackwell_over_hopper_within_10_percent(blackwell):
    """Published: B200/H100 = 2265/1297 = 1.75, GB200/H100 = 2.66 per GPU (the issue: the engine
    gave 2.35 where runs show ~1.65)."""
    engine = _tps(blackwell) / _tps("h100")
    published = _published(blackwell) / _published("h100")
    assert engine == pytest.approx(published, rel=BAND), (engine, published)


#: the absolute gap of each case, by its parts (strict: the test fails once the case is inside)
GAPS = {
    "h100": "+23%: compute 79% of the step (MoE GEMMs at the catalog's dense GEMM rate, permutations "
            "counted, mlp and mla_up_proj recomputed), ep_comm 14% (DeepEP dispatch hidden behind the other "
            "micro-batch, 20 of 132 SMs taken), straggler 4%; not modelled: grouped-GEMM efficiency of the "
            "small experts, host launch overhead, the MTP layer",
    "b200": "+33%: compute 76%, exposed all-to-all 11% (no overlap in this recipe), bubble 10% (pp 16, "
            "128 micro-batches); as h100 the expert GEMMs run at the dense GEMM rate",
    "gb200": "+28%: compute 78%, exposed NVLink dispatch 16% (EP 64 inside one rack), bubble 2%; as h100",
}


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=GAPS[k]))
                                 for k in ("h100", "b200", "gb200")])
def test_deepseek_v3_within_10_percent(key):
    assert _tps(key) == pytest.approx(_published(key), rel=BAND)


@pytest.mark.parametrize("key", ["h100", "b200", "gb200"])
def test_the_gap_is_the_one_explained(key):
    """Each case sits where its GAPS entry says (±3 points): a change that moves it must say why."""
    want = float(GAPS[key].split("%")[0]) / 100
    assert _tps(key) / _published(key) - 1 == pytest.approx(want, abs=0.03)


@pytest.mark.parametrize("key", ["h100", "b200", "gb200"])
def test_the_parts_add_up_and_compute_leads(key):
    r = RUNS[key]
    assert sum(r.breakdown_s.values()) == pytest.approx(r.iteration_time_s, rel=1e-6)
    assert r.breakdown_s["compute"] / r.iteration_time_s > 0.7


def test_one_ep_group_per_nvl72_rack_stays_on_nvlink():
    """64 GPUs per rack (the recipes' HybridEP ranks per NVLink domain): every EP 64 group is one
    rack, its dispatch crosses no network."""
    (ep,) = [c for c in RUNS["gb200"].collectives if c.name == "ep_alltoall"]
    assert (ep.ranks, ep.servers) == (64, 1)


def test_flex_dispatch_sends_a_token_once_per_remote_server():
    """DeepSeek-V3 on EP 64 over 8 servers: 256 experts, 32 per server, top 8, balanced: a server
    is missed with probability C(224, 8)/C(256, 8); 7 other servers."""
    want = 7 * (1 - math.comb(224, 8) / math.comb(256, 8))
    assert tr.remote_nodes_per_token(256, 8, 8) == pytest.approx(want)
    assert want < 8 * 7 / 8  # fewer than the all-to-all's copies for other servers
    assert tr.remote_nodes_per_token(256, 8, 1) == 0


def test_moe_permutation_bytes_are_charged_as_memory_time():
    w = W.Workload(layers=4, dense_layers=1, hidden=2048, heads=16, experts=64, top_k=8, moe_ffn_hidden=1024, mlp="swiglu",
                   seq_len=4096, tp=1, pp=1, dp=8, ep=8, global_batch=8, recompute=False, flash_attention=True)
    from designer.topology.catalog import load_catalog
    h100 = load_catalog().get("gpu", "h100-sxm")
    ct = W.compute(w, h100)
    fwd, bwd = W.moe_memory_bytes(w)
    t, c, h, F = 4096, 4096 * 8, 2048, 1024
    assert fwd == pytest.approx((2 * t * h + 6 * c * h + c * 3 * F) * 2)
    assert bwd == pytest.approx((2 * t * h + 6 * c * h + c * 5 * F) * 2)
    assert ct.moe_memory_s == pytest.approx(w.stage_layers * 3 / 4 * (fwd + bwd) / (h100["memory_bw_TBps"] * 1e12))
    assert W.moe_memory_bytes(W.Workload(layers=2, hidden=64, heads=2)) == (0.0, 0.0)
