"""RoCE congestion model: what share of a link's line rate collective traffic gets, by fabric kind
and routing. Pure functions (no Qt, no topology): the network stage applies them to its link
capacities (the hook lives in :mod:`designer.engine.pipeline`).

Two separate losses, so that neither is counted twice:

* **ECMP hash collisions** (:func:`ecmp_collision_efficiency`). Static ECMP hashes each flow onto
  one of ``paths`` equal uplinks; AI collectives are a few long "elephant" flows, so the uplinks
  get unequal numbers of flows and a synchronous collective finishes with the most loaded one.
  With ``n`` flows hashed uniformly onto ``m`` paths the expected load of the busiest path is the
  balls-into-bins maximum; the group's useful share is ``(n/m) / E[max]`` (computed exactly, not
  by the asymptotic ``ln n / ln ln n`` of Raab and Steger, 'Balls into Bins - A Simple and Tight
  Analysis', RANDOM 1998). Adaptive routing (InfiniBand AR, Spectrum-X per-packet spraying)
  spreads the bytes and loses nothing here. When the network stage routes every flow itself (its
  ECMP hash already collides), this part is already in its solution and must not be applied again.
* **Congestion control and flow control** (:func:`congestion_control_efficiency`): the share of a
  saturated link that survives the fabric's reaction to congestion. InfiniBand uses credit-based
  link-level flow control: a sender transmits only into buffer space the receiver has granted, so
  there are no drops and no pause frames (InfiniBand Architecture Specification vol. 1, link-level
  flow control): 1.0. RoCE on Ethernet needs Priority Flow Control (PFC) to be lossless and
  DCQCN (Zhu et al., 'Congestion Control for Large-Scale RDMA Deployments', SIGCOMM 2015) to keep
  PFC pauses rare; pauses still spread congestion to innocent flows (head-of-line blocking, pause
  storms: Guo et al., 'RDMA over Commodity Ethernet at Scale', SIGCOMM 2016). NVIDIA states that
  Spectrum-X (adaptive routing plus telemetry-based congestion control) uses 95 % or more of the
  bandwidth and gives 1.6x the AI networking performance of standard Ethernet of the same raw
  bandwidth (nvnexus.com, 'NVIDIA Spectrum-X: AI-First Ethernet'; dev.to/firstpasslab). So:
  Ethernet with adaptive routing and telemetry CC: 0.95 on a saturated link (``ADAPTIVE_ETHERNET``);
  standard Ethernet (ECMP, DCQCN + PFC): ``DCQCN_FLOOR`` = 0.9 for congestion control alone
  (assumption: DCQCN keeps long flows near line rate, PFC pauses cost the rest), times the
  collision share of the flows at hand. Cross-check against the vendor's 1.6x (not a fit): at 16
  flows per uplink on 64 uplinks the collision share is 0.61 and Spectrum-X comes out
  0.95 / (0.9 x 0.61) = 1.7x ahead (tests/test_congestion.py).

Load: below saturation nothing is lost (a link that is not the bottleneck carries what it is
offered); the loss applies to the bottleneck links, i.e. scaling the capacity of the fabric's links
by the efficiency at ``utilization >= 1`` and leaving it at 1 below ``SATURATION_ONSET`` (linear in
between, an interpolation so the effective capacity is continuous in the load).
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import repeat

import numpy as np
from designer.engine.mathfns import poisson_cdf_table

#: share of a saturated link with adaptive routing and telemetry-based congestion control
#: (Spectrum-X: "95 % or more of the available bandwidth", see the module docstring)
ADAPTIVE_ETHERNET = 0.95
#: the Spectrum-X advantage over standard Ethernet the vendor states (cross-check only)
VENDOR_ADVANTAGE = 1.6
#: standard RoCE Ethernet's congestion control alone (DCQCN + PFC) on a saturated link
#: (assumption, see the module docstring; collisions come on top)
DCQCN_FLOOR = 0.9
#: utilization from which congestion control starts to cost throughput (queues build; ECN
#: marking thresholds of DCQCN sit well below full buffers)
SATURATION_ONSET = 0.8

FABRICS = ("infiniband", "ethernet")
ROUTINGS = ("ecmp", "adaptive")


@lru_cache(maxsize=4096)
def expected_max_load(flows: int, paths: int) -> float:
    """E[number of flows on the busiest of ``paths`` paths] when ``flows`` flows are hashed
    uniformly and independently (exact: ``E[M] = sum_k P(M >= k)``, with ``P(M < k)`` the
    coefficient ``flows! / paths^flows [x^flows] (sum_{j<k} x^j / j!)^paths``)."""
    if flows <= 0 or paths <= 0:
        return 0.0
    if paths == 1:
        return float(flows)
    if flows > EXACT_MAX_FLOWS:
        return _poissonized_max(flows, paths)
    n, m = flows, paths
    log_fact = np.array([math.lgamma(j + 1) for j in range(n + 1)])
    total = 0.0
    for k in range(1, n + 1):
        # truncated exponential series sum_{j<k} x^j/j!, raised to the m-th power (coefficients
        # up to x^n), in floating point relative to the leading behaviour
        base = np.zeros(n + 1)
        base[:min(k, n + 1)] = np.exp(-log_fact[:min(k, n + 1)])
        poly = np.zeros(n + 1)
        poly[0] = 1.0
        power, e = base.copy(), m
        while e:
            if e & 1:
                poly = np.convolve(poly, power)[:n + 1]
            e >>= 1
            if e:
                power = np.convolve(power, power)[:n + 1]
        below = math.exp(log_fact[n] - n * math.log(m)) * poly[n] if poly[n] > 0 else 0.0
        below = min(max(below, 0.0), 1.0)
        total += 1.0 - below
        if below > 1.0 - 1e-15:
            break
    return total


#: up to this many flows the expectation is exact; above it, Poissonized (each path's count
#: Poisson(flows/paths), independent), whose error vanishes as flows grow
EXACT_MAX_FLOWS = 32


def _poissonized_max(flows: int, paths: int) -> float:
    """E[max] of ``paths`` independent Poisson(flows/paths) counts: ``sum_k 1 - F(k-1)^paths``."""
    lam = flows / paths
    k = np.arange(1, int(lam + 12 * math.sqrt(lam) + 30))
    cdf = poisson_cdf_table(len(k), lam)[:, 0]  # P(Poisson(lam) <= k - 1), scipy's pdtr(k - 1, lam)
    below = np.exp(paths * np.log(np.maximum(cdf, 1e-300)))
    return float(np.sum(1.0 - below))


def ecmp_collision_efficiency(flows: int, paths: int) -> float:
    """Useful share of ``paths`` uplinks when ``flows`` equal long flows are ECMP-hashed onto them
    and the group finishes with the busiest path: ``(flows / paths) / E[max load]`` (1.0 when every
    flow could have its own path evenly, i.e. ``paths == 1``)."""
    if flows <= 0 or paths <= 1:
        return 1.0
    return (flows / paths) / expected_max_load(int(flows), int(paths))


def congestion_control_efficiency(fabric: str, routing: str, utilization: float = 1.0) -> float:
    """Share of a link's line rate that survives flow and congestion control at ``utilization``
    (offered load / line rate): see the module docstring."""
    if fabric not in FABRICS:
        raise ValueError(f"congestion: fabric must be one of {', '.join(FABRICS)}, got {fabric!r}")
    if routing not in ROUTINGS:
        raise ValueError(f"congestion: routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
    if fabric == "infiniband":
        at_saturation = 1.0
    elif routing == "adaptive":
        at_saturation = ADAPTIVE_ETHERNET
    else:
        at_saturation = DCQCN_FLOOR
    u = max(float(utilization), 0.0)
    if u <= SATURATION_ONSET:
        return 1.0
    if u >= 1.0:
        return at_saturation
    return 1.0 - (1.0 - at_saturation) * (u - SATURATION_ONSET) / (1.0 - SATURATION_ONSET)


def link_efficiency(fabric: str, routing: str, utilization: float = 1.0, *, flows: int = 0,
                    paths: int = 0, collisions_routed: bool = True) -> float:
    """Effective share of line rate for a link group: congestion control, times the ECMP
    collision share unless the caller's routing already placed every flow
    (``collisions_routed``, the network stage's case) or routing is adaptive."""
    eff = congestion_control_efficiency(fabric, routing, utilization)
    if routing == "ecmp" and not collisions_routed:
        eff *= ecmp_collision_efficiency(flows, paths)
    return eff


def capacity_factors(media, routing: str, utilization: float = 1.0) -> np.ndarray:
    """Per arc (or link) of the network stage: the congestion-control share of each arc's
    capacity for its medium ("infiniband" or "ethernet", e.g. ``Link.medium``) under ``routing``.
    The network stage routes every flow itself (ECMP collisions included), so only congestion
    control is applied here; multiply the arc capacities by it before sharing them out."""
    table = {m: congestion_control_efficiency(m, routing, utilization) for m in FABRICS}
    media = list(media)
    # a dict look-up per item: a few distinct media, and no sort of the strings
    return np.fromiter(map(table.get, map(str, media), repeat(1.0)), dtype=float, count=len(media))
