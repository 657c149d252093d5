"""RoCE congestion model (engine/congestion.py): ECMP collisions, PFC/DCQCN vs credit-based flow
control vs adaptive routing."""

import pytest

from designer.engine import congestion as cg


def test_expected_busiest_path_matches_hand_counts():
    # 2 flows on 2 paths: same path with probability 1/2 (max 2), else 1 -> 1.5
    assert cg.expected_max_load(2, 2) == pytest.approx(1.5)
    # 3 on 3: all distinct 6/27 (max 1), all on one 3/27 (max 3), else 18/27 (max 2) -> 51/27
    assert cg.expected_max_load(3, 3) == pytest.approx(51 / 27)
    # 4 on 2: (4,0) 2/16, (3,1) 8/16, (2,2) 6/16 -> (8 + 24 + 12) / 16 = 2.75
    assert cg.expected_max_load(4, 2) == pytest.approx(2.75)
    assert cg.expected_max_load(5, 1) == 5.0


def test_poissonized_maximum_joins_the_exact_one():
    n = cg.EXACT_MAX_FLOWS
    assert cg._poissonized_max(n, n) == pytest.approx(cg.expected_max_load(n, n), rel=0.01)


def test_collisions_cost_most_with_one_flow_per_path_and_vanish_with_many():
    one = cg.ecmp_collision_efficiency(64, 64)
    many = cg.ecmp_collision_efficiency(100_000, 64)
    assert one < 0.3 < 0.9 < many <= 1.0
    assert cg.ecmp_collision_efficiency(8, 1) == 1.0  # one path: nothing to collide on


def test_infiniband_and_ethernet_differ_and_adaptive_routing_helps():
    ib = cg.link_efficiency("infiniband", "ecmp", 1.0)
    eth = cg.link_efficiency("ethernet", "ecmp", 1.0)
    eth_ar = cg.link_efficiency("ethernet", "adaptive", 1.0)
    assert ib == 1.0  # credit-based link-level flow control: no drops, no pauses
    assert eth_ar == pytest.approx(0.95)  # Spectrum-X: 95 % or more of the bandwidth
    assert eth < eth_ar < ib
    # not bottlenecked: nothing lost
    assert cg.link_efficiency("ethernet", "ecmp", 0.5) == 1.0
    # continuous in the load
    assert cg.link_efficiency("ethernet", "ecmp", 0.9) == pytest.approx((1 + eth) / 2)


def test_spectrum_x_advantage_is_near_the_published_1_6x():
    # NVIDIA: Spectrum-X 1.6x the AI networking performance of standard Ethernet; with 16 flows
    # per uplink on 64 uplinks (low-entropy collective traffic) the model's ratio is within 20 %
    std = cg.link_efficiency("ethernet", "ecmp", 1.0, flows=16 * 64, paths=64, collisions_routed=False)
    sx = cg.link_efficiency("ethernet", "adaptive", 1.0, flows=16 * 64, paths=64, collisions_routed=False)
    assert sx / std == pytest.approx(cg.VENDOR_ADVANTAGE, rel=0.2)


def test_collisions_already_routed_are_not_counted_twice():
    routed = cg.link_efficiency("ethernet", "ecmp", 1.0, flows=64, paths=64)
    assert routed == pytest.approx(cg.DCQCN_FLOOR)


@pytest.mark.parametrize("fabric, routing", [("omnipath", "ecmp"), ("ethernet", "random")])
def test_unknown_fabric_or_routing_is_refused_with_the_choices(fabric, routing):
    with pytest.raises(ValueError, match="one of"):
        cg.link_efficiency(fabric, routing)


def test_the_network_stage_applies_the_congestion_factors_to_ethernet_only(monkeypatch):
    """The pipeline's network stage scales each arc's capacity by ``capacity_factors`` of its
    link's medium (``pipeline.usable_capacity_GBps``): with the factors switched off (all 1), the
    Spectrum-4 Ethernet design's cross-server collectives take DCQCN_FLOOR as long as with them
    (saturated ECMP links keep that share), the same design on InfiniBand is unchanged."""
    import numpy as np

    from designer.engine import pipeline
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    cat = load_catalog()
    with_factors = cg.capacity_factors

    def crossing_s(result):
        return sum(c.time_s * c.calls_per_iteration for c in result.collectives if c.servers > 1)

    for switch, ratio in (("sn5600", cg.DCQCN_FLOOR), ("qm9700", 1.0)):
        design = rail_optimized(servers=8, switch=switch)
        real = pipeline.run(design, cat, workload="llama3-8b", global_batch=64)
        monkeypatch.setattr(cg, "capacity_factors", lambda media, routing: np.ones(len(media)))
        line_rate = pipeline.run(design, cat, workload="llama3-8b", global_batch=64)
        monkeypatch.setattr(cg, "capacity_factors", with_factors)
        assert crossing_s(line_rate) == pytest.approx(crossing_s(real) * ratio, rel=0.02), switch
