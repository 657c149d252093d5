"""Issue 21: the host kernel TCP stack per direction (send vs receive figures), per packet (a
64-byte-packet tenant pays per packet, not only per byte), and tunnel offload per direction
(TSO on the send side, LRO/GRO on the receive side)."""

import pytest

from designer.engine import hostcpu, resources
from designer.engine.resources import ResourceInputs, ServerGroup, cost_figures
from designer.topology.catalog import figure_kind, load_catalog
from designer.topology.design import SCENARIO_SPEC

CAT = load_catalog()
FIG = cost_figures(CAT)
HC = hostcpu.HostCosts.from_figures(FIG)
AGG = FIG["vswitch_packet_bytes"]


def test_figures_carry_their_kind():
    costs = CAT.costs("host_cpu")
    packet = costs["tcp_cycles_per_packet"]["source"]
    assert figure_kind(packet) == "derived" and "measurement, lower bound" in packet
    assert figure_kind(costs["conntrack_cycles_per_packet"]["source"]) == "derived"
    send = costs["tcp_send_cycles_per_byte"]["source"]
    assert figure_kind(send) == "derived" and "upper bound" in send
    assert SCENARIO_SPEC["tunnel_rx_offload"].default is True


def test_the_receive_figure_is_one_receiver_core_at_42_gbps_and_bounds_the_sender():
    # Cai et al. (SIGCOMM 2021): ~42 Gb/s per receiver core (one flow) on 3.4 GHz cores: cycles
    # per byte = clock / bytes per second; the receiver is the costlier side, so the sender's
    # figure is at most that (the second-hand ~89 Gb/s per sender core would be 0.306)
    assert HC.tcp_cycles_per_byte == pytest.approx(3.4e9 / (42e9 / 8), abs=5e-3)
    assert 3.4e9 / (89e9 / 8) < HC.tcp_send_cycles_per_byte <= HC.tcp_cycles_per_byte


def test_the_per_packet_figures_are_the_xdp_papers_single_core_drop_rates():
    # Hoiland-Jorgensen et al. (CoNEXT 2018), 64-byte packets on one 3.6 GHz core: the Linux
    # stack drops 4.8 Mpps at the raw table and 1.8 Mpps with connection tracking
    raw, conntrack = 3.6e9 / 4.8e6, 3.6e9 / 1.8e6
    assert HC.tcp_cycles_per_packet == pytest.approx(raw)  # 750: the path up to the first hook
    assert HC.conntrack_cycles_per_packet == pytest.approx(conntrack - raw)  # 1250 on top of it
    # a lower bound of the whole kernel path: below the OVS kernel datapath's measured packet
    assert HC.tcp_cycles_per_packet < HC.vswitch_cycles_per_packet


def test_per_packet_cost_beyond_one_packet_per_aggregate():
    p = HC.tcp_cycles_per_packet
    assert hostcpu.tcp_packet_cycles_per_byte(64, HC) == pytest.approx(p * (1 / 64 - 1 / AGG))
    assert hostcpu.tcp_packet_cycles_per_byte(1500, HC) == pytest.approx(p * (1 / 1500 - 1 / AGG))
    # bulk flows in aggregates (and 0 = bulk) add nothing: the per-byte figure holds their packet
    assert hostcpu.tcp_packet_cycles_per_byte(AGG, HC) == 0.0
    assert hostcpu.tcp_packet_cycles_per_byte(0, HC) == 0.0


def test_network_cycles_split_by_direction():
    k = 8e9  # sent + received
    bulk = hostcpu.network_cycles(k, 0.0, HC)
    assert bulk == pytest.approx(k / 2 * HC.tcp_send_cycles_per_byte + k / 2 * HC.tcp_cycles_per_byte)
    small = hostcpu.network_cycles(k, 0.0, HC, send_packet_bytes=64, receive_packet_bytes=1500)
    assert small == pytest.approx(bulk + k / 2 * HC.tcp_cycles_per_packet * ((1 / 64 - 1 / AGG)
                                                                           + (1 / 1500 - 1 / AGG)))
    # a sender figure of its own moves only the sent half
    half_send = hostcpu.HostCosts.from_figures({**FIG, "tcp_send_cycles_per_byte": 0.3})
    assert hostcpu.network_cycles(k, 0.0, half_send) == pytest.approx(k / 2 * (0.3 + 0.65))


def test_per_direction_packets():
    assert hostcpu.per_direction_packets(6e9, 2000.0, 1500, 1500) == 6e9 / 1500 * 2000.0
    assert hostcpu.per_direction_packets(6e9, 2000.0, AGG, 1500) == pytest.approx(
        (3e9 / AGG + 3e9 / 1500) * 2000.0)


def _host(nbytes=0.2e9, **kw):
    g = ServerGroup(count=1, tcp_bytes=nbytes, comm_s=0.5, rdma=False, **kw)
    return resources.assess(ResourceInputs(groups=(g,), iteration_s=1.0)).groups[0]


def test_a_64_byte_tenant_pays_per_packet_on_the_host_tcp_stack():
    # few enough bytes that the host keeps up (same iteration): the network task's share of
    # cycles grows exactly as its cycles, per byte + per packet over per byte
    bulk, small = _host(), _host(tenant_packet_bytes=64)
    assert bulk.network_slowdown == small.network_slowdown == 1.0
    per_byte = (HC.tcp_send_cycles_per_byte + HC.tcp_cycles_per_byte) / 2  # half sent, half received
    expected = 1 + HC.tcp_cycles_per_packet * (1 / 64 - 1 / AGG) / per_byte
    assert small.host_by_task["network"] / bulk.host_by_task["network"] == pytest.approx(expected)
    assert expected > 15  # 750 x (1/64 - 1/65536) = 11.7 cycles per byte against 0.65
    # at a training job's volume the per-packet work saturates the host CPU
    assert _host(11.52e9, tenant_packet_bytes=64).network_slowdown > _host(11.52e9).network_slowdown


def _overlay(**kw):
    g = ServerGroup(count=1, tcp_bytes=11.52e9, comm_s=0.5, rdma=False, isolated=True, **kw)
    return resources.assess(ResourceInputs(groups=(g,), iteration_s=1.0)).groups[0]


def test_tunnel_offload_per_direction():
    both, rx_off, none = _overlay(), _overlay(tunnel_rx_offload=False), _overlay(tunnel_offload=False)
    # without receive-side LRO/GRO only the received half goes frame by frame: its host switch
    # and TCP packets lie between full offload and none
    for task in ("virtualization", "network"):
        assert both.host_by_task[task] < rx_off.host_by_task[task] < none.host_by_task[task], task
    c_sw = FIG["vswitch_cycles_per_packet"]
    sw = {name: 11.52e9 / 2 * c_sw * (1 / s + 1 / r) for name, s, r in
          (("both", AGG, AGG), ("rx_off", AGG, 1500), ("none", 1500, 1500))}
    got = {name: rep.host_by_task["virtualization"] for name, rep in
           (("both", both), ("rx_off", rx_off), ("none", none))}
    # the same cycles-to-share scale for all three (one server, the same iteration)
    scale = got["both"] / sw["both"]
    for name in ("rx_off", "none"):
        assert got[name] / sw[name] == pytest.approx(scale, rel=0.05), name


def test_checkpoint_writes_over_nvme_tcp_cost_the_send_figure():
    kw = dict(offload=False, emulation=False, transport="tcp", encrypt=False, isolated=False,
              gpudirect_storage=False)
    cheap_send = hostcpu.HostCosts.from_figures({**FIG, "tcp_send_cycles_per_byte": 0.25})
    read = hostcpu.storage_read_cycles_per_byte(c=cheap_send, **kw)["storage"]
    write = hostcpu.storage_read_cycles_per_byte(c=cheap_send, send=True, **kw)["storage"]
    assert read - write == pytest.approx(HC.tcp_cycles_per_byte - 0.25)
    # with the packaged figures a written byte costs the send figure, a read byte the receive one
    assert hostcpu.storage_read_cycles_per_byte(c=HC, **kw)["storage"] - \
        hostcpu.storage_read_cycles_per_byte(c=HC, send=True, **kw)["storage"] == \
        pytest.approx(HC.tcp_cycles_per_byte - HC.tcp_send_cycles_per_byte)
