"""Straggler model: expected maximum of worker noise, host-stack noise, growth with scale."""

import math
from dataclasses import replace

import pytest

from designer.engine import jitter
from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures

FIG = cost_figures()


def test_expected_max_matches_order_statistics_tables():
    # E[max of 2 standard normals] = 1/sqrt(pi); of 1000 = 3.2414 (Harter 1961 tables)
    assert jitter.expected_max([1.0], [2]) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-4)
    assert jitter.expected_max([1.0], [1000]) == pytest.approx(3.2414, abs=1e-3)
    assert jitter.expected_max([0.5], [1000]) == pytest.approx(0.5 * 3.2414, abs=1e-3)
    assert jitter.expected_max([1.0], [1]) == 0.0


def test_expected_max_of_groups_equals_the_pooled_workers():
    assert jitter.expected_max([1.0, 1.0], [300, 700]) == pytest.approx(jitter.expected_max([1.0], [1000]))
    # a noisier group dominates the maximum
    assert jitter.expected_max([1.0, 2.0], [500, 500]) > jitter.expected_max([1.0], [1000])


def test_host_noise_is_compound_poisson_of_detours():
    assert jitter.host_cv(0.25, 0.002, 0.5) == pytest.approx(math.sqrt(0.25 * 0.002 / 0.5))
    assert jitter.host_cv(0.0, 0.002, 0.5) == 0.0


def share(servers, scenario):
    """Straggler share of the step on an encrypted, isolated design (host: heavy stack load)."""
    g = ServerGroup(count=servers, scenario=scenario, gpus=8, cpu_cores=112, cpu_GHz=3.0, dpus=8,
                    rdma_bytes=20e9, tcp_bytes=2e9, comm_s=0.5, encrypt=True, isolated=True)
    r = assess(ResourceInputs(groups=(g,), iteration_s=1.0), FIG)
    return r.straggler_s / r.iteration_s


def test_straggler_share_grows_with_scale_and_is_smaller_with_offload():
    host = [share(n, "host") for n in (16, 256, 2048)]
    off = [share(n, "dpu") for n in (16, 256, 2048)]
    assert host[0] < host[1] < host[2]
    assert off[0] < off[1] < off[2]
    assert all(o < h for o, h in zip(off, host))
