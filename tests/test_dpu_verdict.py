"""Issue 21: the vendor claim in words (engine/compare.verdict, one sentence for CLI, app and
report) and the straggler sentence that says how much host-stack noise adds in each mode."""

from types import SimpleNamespace

import pytest

from designer.cli import main
from designer.engine import resources
from designer.engine.compare import VENDOR_CLAIM, compare, verdict
from designer.engine.resources import ResourceInputs, ServerGroup
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()


def fake(share: float, **tasks: float):
    return SimpleNamespace(host_cpu={"infra_fraction": share, "by_task": tasks})


@pytest.mark.parametrize("share, word", [(0.10, "below"), (0.25, "inside"), (0.40, "inside"),
                                         (0.401, "above")])
def test_verdict_places_the_host_share_against_the_claim_bounds(share, word):
    text = verdict(fake(share, network=share), fake(0.0))
    assert text.startswith(f"this design is {word} the vendor's 25–40% claim")
    assert f"{100 * share:.1f}% of host cycles" in text
    assert VENDOR_CLAIM == (0.25, 0.40)


def test_verdict_names_the_stacks_largest_first_and_what_is_left():
    text = verdict(fake(0.03, network=0.01, crypto=0.02, data_loading=0.5), fake(0.001),
                   fake(0.004))
    assert text.index("software encryption 2.0%") < text.index("kernel TCP collectives 1.0%")
    assert "data" not in text.split("take it:")[1].split(";")[0] + text.split(";")[2]  # loaders are not infra
    assert "SmartNIC-offloaded 0.4%, DPU-offloaded 0.1%" in text


def test_verdict_without_host_stacks_says_why():
    text = verdict(fake(0.0), fake(0.0))
    assert "RDMA carries the collectives" in text and "encryption" in text


def test_compare_cli_prints_the_verdict_of_the_comparison(capsys):
    design = rail_optimized(servers=4)
    cmp = compare(design, CAT, workload="llama3-8b", global_batch=64,
                  scenario={"encryption": True})
    said = cmp.vendor_claim()["verdict"]
    assert said == verdict(cmp.runs["host"], cmp.runs["dpu"], cmp.runs["smartnic"])
    assert cmp.to_json()["vendor_claim"]["verdict"] == said
    from designer.topology import fileformat
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.json")
        design.scenario["encryption"] = True
        fileformat.save(design, path)
        assert main(["compare", path, "--workload", "llama3-8b", "--set", "workload.global_batch=64"]) == 0
    out = capsys.readouterr().out
    assert f"verdict: {said}" in out


def _inputs(scenario: str, **g):
    # encrypted collectives: host-managed they take the kernel path (software AES-GCM + TCP), a
    # DPU encrypts inline and keeps them on RDMA
    group = ServerGroup(count=4, scenario=scenario, gpus=8, cpu_cores=32, cpu_GHz=2.0, dpus=1,
                        rdma_bytes=4e10, encrypt=True, comm_s=0.5, **g)
    return ResourceInputs(groups=(group,), iteration_s=1.0)


def test_straggler_sentence_splits_gpu_spread_from_host_noise():
    host = resources.assess(_inputs("host"))
    dpu = resources.assess(_inputs("dpu"))
    h = next(b for b in host.bottlenecks if b.startswith("stragglers"))
    d = next(b for b in dpu.bottlenecks if b.startswith("stragglers"))
    # host-managed: kernel TCP work on the host adds noise, the sentence gives that part
    assert host.straggler_s > dpu.straggler_s
    assert "host-stack noise adds" in h and "of it" in h
    # the DPU run leaves no host infrastructure work: the wait is the GPUs' own spread
    assert dpu.host_cpu.infra_fraction == 0.0
    assert "no host infrastructure work is left in this mode" in d
    added = float(h.split("host-stack noise adds ")[1].split(" s")[0])
    # derived from the parts: the DPU run's wait is the GPU spread alone, a factor e_gpu of its
    # step; the host run's wait less e_gpu times its own step is what host noise adds
    def step(r):
        return r.iteration_s - r.straggler_s - r.checkpoint_s
    e_gpu = dpu.straggler_s / step(dpu)
    assert added == pytest.approx(host.straggler_s - e_gpu * step(host), rel=0.01)
    assert added > 0
