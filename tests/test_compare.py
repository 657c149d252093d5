"""Host-managed vs DPU-offloaded through the whole pipeline, and ``dpu-designer compare``."""

import json

import pytest

from designer.cli import main
from designer.engine import pipeline
from designer.engine.compare import compare
from designer.engine.resources_adapter import node_wire_bytes
from designer.engine.result import BREAKDOWN_KEYS, CollectiveResult
from designer.engine.sweep import apply_param
from designer.paths import resources_dir
from designer.topology.catalog import load_catalog
from designer.topology.fileformat import load
from designer.topology.templates import rail_optimized

CAT = load_catalog()
WORK = dict(workload="llama3-8b", global_batch=256)  # 16 DGX H100 = 128 GPUs, tp=2 → dp=64


def run(design, offload, **scenario):
    return pipeline.run(design, CAT, scenario={"offload": offload, **scenario}, **WORK)


def nic_and_dpu_designs(servers=16):
    """The same rail-optimized design with 400 Gb/s ConnectX-7 NICs and with BlueField-3 DPUs."""
    return rail_optimized(servers=servers), rail_optimized(servers=servers, dpu="bluefield-3")


def set_all(design, kind, name, value):
    for c in [c for c in design.topology.components.values() if c.kind == kind]:
        design.topology.set_prop(c.id, name, value)


def test_node_wire_bytes_follow_the_bus_bandwidth_factors_over_servers():
    def coll(op, algorithm, servers):
        return CollectiveResult("x", op, algorithm, "simple", 1e9, 1, 1.0, 1.0, 1.0, 8 * servers, servers)
    # 4 servers: ring all-reduce 2(4-1)/4 = 1.5 buffers, reduce-scatter (4-1)/4, SHARP one buffer
    assert node_wire_bytes(coll("allreduce", "ring", 4)) == pytest.approx(1.5e9)
    assert node_wire_bytes(coll("reduce_scatter", "ring", 4)) == pytest.approx(0.75e9)
    assert node_wire_bytes(coll("allreduce", "sharp", 4)) == pytest.approx(1e9)
    assert node_wire_bytes(coll("allreduce", "ring", 1)) == 0.0


def test_dpus_of_equal_line_rate_are_never_slower_than_rdma_nics():
    nic, dpu = nic_and_dpu_designs()
    host, off = run(nic, "host"), run(dpu, "dpu")
    assert off.iteration_time_s <= host.iteration_time_s * (1 + 1e-12)
    assert off.iteration_time_s == pytest.approx(host.iteration_time_s, rel=0.01)
    assert off.breakdown_s["dpu_slowdown"] == 0.0
    # the DPUs carry the traffic: load reported, no time added. Hand derivation: only the DP
    # all-reduce crosses servers (tp=2 inside them); each server sends 2(n-1)/n of a rank's buffer
    # per group for a ring over n servers, the buffer once up a SHARP tree; a server's 8 GPUs hold
    # 8 / (ranks per server) groups; it receives as much, so one direction carries what is sent,
    # on 8 x 400 Gb/s rails
    assert off.dpu["line"] == pytest.approx(one_direction_line_load(off, rails=8))


def one_direction_line_load(result, rails):
    """Bytes a server sends over the time of the collectives that cross servers, over its rails'
    one-direction rate. A ring all-reduce over n servers sends 2(n-1)/n of a rank's buffer, a
    reduce-scatter or all-gather (n-1)/n, a SHARP all-reduce the buffer once."""
    sent = busy = 0.0
    for c in [c for c in result.collectives if c.servers > 1]:
        n = c.servers
        factor = 1.0 if c.algorithm == "sharp" else (2 * (n - 1) / n if c.op == "allreduce" else (n - 1) / n)
        sent += factor * c.bytes * c.calls_per_iteration * 8 / (c.ranks // n)
        busy += c.time_s * c.calls_per_iteration
    return sent / busy / (rails * 400e9 / 8)


def test_example_line_load_is_one_direction_on_the_rail_dpus_only():
    """Review finding: sent + received was divided by the one-direction rate of all ten DPUs."""
    example = load(resources_dir() / "examples" / "example.json")
    off = pipeline.run(example, CAT, scenario={"offload": "dpu"})
    # 8 rail DPUs per server; the 2 on the storage network carry no collective traffic. The
    # sharded optimizer's reduce-scatter and all-gather of 8.03 GB each over 8 servers, 4 ranks per
    # server: 2 groups x 7/8 x 8.03 GB sent per collective (before: sent + received over
    # 10 x 50 GB/s)
    assert [c.op for c in off.collectives if c.servers > 1] == ["reduce_scatter", "allgather"]
    assert off.dpu["line"] == pytest.approx(one_direction_line_load(off, rails=8))
    assert 0.4 < off.dpu["line"] <= 1.0  # rings at most fill the rails while they run


def test_the_scaled_example_is_not_slower_offloaded():
    """Bug report: the example at 32 and 128 servers came out slower DPU-offloaded."""
    base = load(resources_dir() / "examples" / "example.json")
    for servers in (32, 128):
        design = apply_param(base, "servers", servers)
        host = pipeline.run(design, CAT, scenario={"offload": "host"})
        off = pipeline.run(design, CAT, scenario={"offload": "dpu"})
        assert off.training_time_days <= host.training_time_days * (1 + 1e-12)
        assert off.mfu >= host.mfu * (1 - 1e-12)


def test_encryption_moves_host_crypto_to_the_adapters_at_their_measured_rate():
    nic, dpu = nic_and_dpu_designs()
    host, off = run(nic, "host", encryption=True), run(dpu, "dpu", encryption=True)
    smart = run(nic, "smartnic", encryption=True)
    assert off.iteration_time_s <= host.iteration_time_s * (1 + 1e-9)
    # host: software AES-GCM and kernel TCP (encryption takes the collectives off RDMA)
    assert host.host_cpu["by_task"]["crypto"] > 0 and host.host_cpu["by_task"]["network"] > 0
    # SmartNIC and DPU encrypt inline: nothing left on the host, the crypto engine loaded
    for r in (smart, off):
        assert r.host_cpu["infra_fraction"] == 0.0 and r.dpu["crypto"] > 0
    # the engines run at the measured 193 Gb/s (not the 400 Gb/s datasheet figure): crypto load
    # is line load x 400/193 on a BlueField-3 (blog.amododesign.com, strongSwan between two BF-3)
    assert off.dpu["crypto"] == pytest.approx(off.dpu["line"] * 400 / 193, rel=1e-6)
    # ConnectX-7 as a SmartNIC: its crypto-enabled OPN at the same engine's 193 Gb/s (193 of the
    # 400 Gb/s line rate): the same crypto load as the BlueField-3 for the same line load
    assert smart.dpu["crypto"] == pytest.approx(smart.dpu["line"] * 400 / 193, rel=1e-9)
    assert "arm" not in smart.dpu


def test_an_oversubscribed_crypto_engine_slows_the_dpu_design_and_is_named():
    _, dpu = nic_and_dpu_designs()
    set_all(dpu, "dpu", "crypto_Gbps", 10)  # far below the 400 Gb/s the rails carry
    plain, enc = run(dpu, "dpu"), run(dpu, "dpu", encryption=True)
    assert enc.dpu["crypto"] > 1
    assert enc.breakdown_s["dpu_slowdown"] > 0
    assert enc.iteration_time_s > plain.iteration_time_s
    assert any("DPU crypto engine" in b for b in enc.bottlenecks)


def test_dpu_line_rate_below_the_port_rate_slows_by_at_most_their_ratio():
    _, dpu = nic_and_dpu_designs()
    crossing_pp = dict(tp=8, pp=2)  # pipeline stages on two servers: send/receive on the critical path
    full = pipeline.run(dpu, CAT, scenario={"offload": "dpu"}, **WORK, **crossing_pp)
    set_all(dpu, "dpu", "max_bandwidth_Gbps", 100)  # 100 Gb/s DPUs on 400 Gb/s links
    slow = pipeline.run(dpu, CAT, scenario={"offload": "dpu"}, **WORK, **crossing_pp)
    assert slow.breakdown_s["dpu_slowdown"] > 0
    assert any("DPU line engine" in b for b in slow.bottlenecks)
    # the collectives that cross servers take at most 400/100 = 4x as long
    crossing = sum(c.time_s * c.calls_per_iteration for c in full.collectives if c.servers > 1)
    assert slow.breakdown_s["dpu_slowdown"] <= 3 * crossing * (1 + 1e-9)


def test_host_infra_share_rises_without_rdma_and_with_encryption_and_tenants():
    nic, _ = nic_and_dpu_designs()
    rdma = run(nic, "host")
    # two jobs, each on half the servers with half the global batch: per GPU the same work
    tenants = pipeline.run(nic, CAT, scenario={"offload": "host", "encryption": True, "tenants": 2},
                           workload="llama3-8b", global_batch=128)
    tcp = nic.copy()
    set_all(tcp, "nic", "rdma", False)
    kernel = run(tcp, "host")
    kernel_tenants = pipeline.run(tcp, CAT, scenario={"offload": "host", "tenants": 2},
                                  workload="llama3-8b", global_batch=128)
    share = lambda r: r.host_cpu["infra_fraction"]
    assert share(rdma) < share(kernel) < share(tenants)
    assert kernel.host_cpu["by_task"]["network"] > 0 and kernel.host_cpu["by_task"]["crypto"] == 0
    assert kernel_tenants.host_cpu["by_task"]["virtualization"] > 0
    # the same consumers leave the host when the NICs are modelled as DPUs
    off = pipeline.run(tcp, CAT, scenario={"offload": "dpu", "nic_as_dpu": True, "tenants": 2},
                       workload="llama3-8b", global_batch=128)
    assert off.host_cpu["by_task"]["virtualization"] == 0 and share(off) < share(kernel_tenants)


def test_breakdown_names_every_part_and_adds_up():
    nic, _ = nic_and_dpu_designs()
    # pipeline stages on two servers: their send/receive sits on the critical path
    r = pipeline.run(nic, CAT, scenario={"offload": "host", "encryption": True}, **WORK, tp=8, pp=2)
    assert tuple(r.breakdown_s) == BREAKDOWN_KEYS and "other" not in r.breakdown_s
    assert sum(r.breakdown_s.values()) == pytest.approx(r.iteration_time_s, rel=1e-12)
    assert r.breakdown_s["host_cpu_slowdown"] > 0 and r.breakdown_s["straggler"] > 0


def test_a_slowed_dp_all_reduce_that_still_hides_behind_the_backward_pass_costs_nothing():
    nic, _ = nic_and_dpu_designs()
    # tp=2 inside servers: only the DP all-reduce crosses; micro-batches of 2 sequences, so each
    # backward pass is long enough to hide the slowed all-reduce with room to spare
    r = pipeline.run(nic, CAT, scenario={"offload": "host", "encryption": True}, **WORK, micro_batch=2)
    assert r.resources["groups"][0]["network_slowdown"] > 1.2  # software AES-GCM saturates the CPU
    dp = sum(c.time_s for c in r.collectives if c.name.startswith("dp_"))
    slowed = dp * r.resources["groups"][0]["network_slowdown"]
    # backward >= half of a micro-batch's compute (compute / m, m = 256 / (64 x 2) = 2)
    assert slowed < 0.5 * r.breakdown_s["compute"] / 2
    assert r.breakdown_s["host_cpu_slowdown"] == 0.0 and r.breakdown_s["dp_exposed"] == 0.0


def test_compare_models_nics_as_dpus_and_keeps_the_design_mix():
    nic, _ = nic_and_dpu_designs(8)
    for d in nic.topology.of_kind("dpu"):  # no DPU drawn: the DPU run turns each NIC into one
        nic.topology.remove_component(d.id)
    nic.scenario["per_server"] = {nic.topology.servers()[0].id: "dpu"}
    nic.scenario["nic_as_dpu"] = True
    cmp = compare(nic, CAT, workload="llama3-8b", global_batch=128)
    assert set(cmp.runs) == {"host", "smartnic", "dpu", "design"}
    assert cmp.notes and "bluefield-3" in cmp.notes[0] and "400 Gb/s" in cmp.notes[0]
    bf3 = CAT.get("dpu", "bluefield-3")["power_W"]
    adapters = sum(c.kind in ("nic", "dpu") for c in nic.topology.components.values())
    assert cmp.runs["dpu"].power_W["adapters"] == pytest.approx(adapters * bf3)  # every NIC became a DPU
    # the design's own mix: one server offloaded, the others host-managed
    groups = cmp.runs["design"].resources["groups"]
    assert sorted((g["scenario"], g["count"]) for g in groups) == [("dpu", 1), ("host", 7)]
    h, d = cmp.runs["host"].iteration_time_s, cmp.runs["dpu"].iteration_time_s
    assert cmp.deltas["iteration_time_s"]["delta"] == pytest.approx(d - h)
    assert cmp.deltas["iteration_time_s"]["percent"] == pytest.approx(100 * (d - h) / h)


@pytest.fixture(scope="module")
def r256(tmp_path_factory):
    """256-server rail-optimized design, storage on the compute fabric, encryption on (the
    acceptance design; 40 servers per scalable unit so the converged fabric fits one spine layer)."""
    out = tmp_path_factory.mktemp("r256") / "r256.json"
    assert main(["new", "--template", "rail-optimized", "--servers", "256", "--storage", "converged",
                 "--su-size", "40", "-o", str(out)]) == 0
    return out


def test_acceptance_compare_on_256_servers_with_encryption(r256, capsys):
    capsys.readouterr()
    args = ["compare", str(r256), "--workload", "llama3-70b", "--set", "scenario.encryption=true"]
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    host, dpu, deltas = data["host"], data["dpu"], data["deltas"]
    assert host["host_cpu"]["infra_fraction"] > dpu["host_cpu"]["infra_fraction"]
    assert deltas["training_time_days"]["delta"] < 0
    assert deltas["infra_fraction"]["delta"] < 0
    for r in (host, dpu):
        assert sum(r["breakdown_s"].values()) == pytest.approx(r["iteration_time_s"], rel=1e-12)
    # every part that differs has a reason, and the host-managed reasons name host crypto
    moved = [k for k, v in deltas["breakdown_s"].items() if abs(v["delta"]) > 1e-3 * host["iteration_time_s"]]
    assert all(any(r.startswith(k) and "because" in r for r in data["reasons"]) for k in moved)
    assert any("crypto" in r for r in data["reasons"])
    # the three modes with their power: BlueField-3 (150 W) vs ConnectX-7 (25 W) per adapter
    modes = data["modes"]
    assert set(modes) == {"host", "smartnic", "dpu"}
    adapters = 256 * 8
    assert modes["dpu"]["adapters_W"] - modes["smartnic"]["adapters_W"] == pytest.approx(adapters * (150 - 25))
    assert data["smartnic"]["host_cpu"]["infra_fraction"] == 0.0
    assert main(args) == 0
    text = capsys.readouterr().out
    share = f"{100 * host['host_cpu']['infra_fraction']:.1f}% host-managed, " \
            f"{100 * data['smartnic']['host_cpu']['infra_fraction']:.1f}% SmartNIC, " \
            f"{100 * dpu['host_cpu']['infra_fraction']:.1f}% DPU-offloaded"
    assert "vendor claim: 25–40% of host cycles on infrastructure; this design: " + share in text
    assert "training time, steady state (days)" in text and "bottlenecks, host-managed" in text
    assert "SmartNIC-offloaded" in text and "adapter power (kW, max)" in text and "energy cost (USD)" in text
    assert "NICs as a bluefield-3 DPU" in text


def test_compare_bad_set_is_one_line(r256, capsys):
    assert main(["compare", str(r256), "--set", "scenario.encryption=maybe"]) == 2
    err = capsys.readouterr().err
    assert "scenario.encryption=maybe" in err and "true or false" in err and "Traceback" not in err


def test_host_managed_encryption_rules_sharp_out_and_the_dpu_keeps_it():
    # SHARP runs over RDMA verbs; host-managed encryption sends the collectives through kernel
    # TCP, so the same Quantum-2 fabric reduces in-network only when the DPUs encrypt
    _, dpu = nic_and_dpu_designs()
    work = {**WORK, "optimizer_sharded": False}
    plain = pipeline.run(dpu, CAT, scenario={"offload": "host"}, **work)
    host = pipeline.run(dpu, CAT, scenario={"offload": "host", "encryption": True}, **work)
    off = pipeline.run(dpu, CAT, scenario={"offload": "dpu", "encryption": True}, **work)

    def algorithm(result):
        (c,) = [c for c in result.collectives if c.name == "dp_allreduce"]
        return c.algorithm
    assert algorithm(plain) == "sharp" and algorithm(off) == "sharp"
    assert algorithm(host) != "sharp"
    why = [b for b in host.bottlenecks if b.startswith("SHARP off for the DP all-reduce")]
    assert why and "kernel TCP" in why[0] and "RDMA" in why[0]
    assert not any(b.startswith("SHARP off") for b in off.bottlenecks)


def test_compare_prints_memory_per_gpu_as_run_and_the_app_do():
    """``dpu-designer compare`` carries the memory rows of ``run``, the app and the report
    (``report.names.memory_rows``): the same names and values in every column (issue 22)."""
    from designer.commands.compare import format_table
    from designer.commands.run import memory_lines
    from designer.services.style import figure

    cmp = compare(load(resources_dir() / "examples" / "example.json"), CAT)
    host = cmp.runs["host"]
    lines = format_table(cmp).splitlines()
    (mem,) = [l for l in lines if l.startswith("memory per GPU (GB)")]
    total = figure("GB", host.memory_per_gpu_GB)
    assert mem.split()[4:7] == [total] * 3 and f" {total} GB" in memory_lines(host)[0]
    (cap,) = [l for l in lines if l.startswith("GPU memory (GB)")]
    assert cap.split()[3] == figure("GB", host.gpu_memory_GB)
    (fits,) = [l for l in lines if l.startswith("fits in GPU memory")]
    assert fits.split()[4:] == ["yes"] * 3
    (weights,) = [l for l in lines if l.startswith("  weights")]
    assert weights.split()[1] == figure("GB", host.memory_parts_GB["weights"])
