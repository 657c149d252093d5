"""Stragglers: per-worker iteration-time noise and the synchronous step's expected maximum.

Model (documented, figures in ``models/costs/jitter.toml``):

* Every GPU worker's step time is ``T * (1 + g + h)``: ``g ~ Normal(0, gpu_cv)`` is the GPU-to-GPU
  performance spread (Sinha et al., SC 2022); ``h`` is host-stack noise. Workers are independent.
* Host-stack noise is compound-Poisson (the model class of Hoefler et al., 'Characterizing the
  Influence of System Noise on Large-Scale Applications by Simulation', SC 2010): if a fraction
  ``f`` of the host's cycles goes to infrastructure work that preempts a training thread in
  detours of random length ``D``, the number of detours in a step of ``T`` seconds is Poisson with
  mean ``mu = f*T/E[D]`` and the stolen time ``S`` has variance ``mu*E[D^2]``. ``h = (S - E[S])/T``
  (the average stolen time is already counted as the cores the stacks take, so only the spread
  is noise).
* Detour lengths come from a distribution, not from one constant: exponential with the typical
  length ``detour_mean_s`` (an assumption, 30 us: no published distribution of network-stack
  detour lengths was found; jitter.toml gives the bounds that were and the tested range 10-100 us,
  over which steps of seconds move by under 0.01 % and a few-ms step's offload gain grows about in
  proportion), truncated at ``detour_s``, the longest a network softirq round may run
  (``netdev_budget_usecs``). The cap
  hardly matters because ``detour_s`` is some 60 typical detours: ``E[D^2]/E[D]`` of the truncated
  exponential is ``2*detour_mean_s`` to within 1e-20 (:func:`detour_moments`). Halving or doubling
  the cap therefore changes no result by more than 2 % (tests/test_dpu_jitter.py); the earlier
  model used the cap as every detour's length, which made the encryption headline a product of
  that one constant.
* A synchronous step ends when the slowest worker ends: its cost is ``T * E[max_i e_i]``. For many
  detours per step (``mu >= NORMAL_MIN_DETOURS``) ``h`` is normal with ``host_cv = sqrt(f *
  E[D^2]/E[D] / T)`` and the maximum is computed exactly from ``F(x) = prod_g Phi(x/sigma_g)**n_g``
  (:func:`expected_max`). For short iterations (few detours per step, e.g. a 0.7 ms ResNet step,
  ``mu`` well below 1) the normal approximation is wrong (a worker either loses a whole detour or
  nothing), so the maximum is computed from the compound-Poisson law itself
  (:func:`expected_max_workers`: Poisson mixture of Gamma sums of detours, GPU spread by
  Gauss-Hermite quadrature).
* Range: the model treats a detour as a small part of a step. Steps shorter than
  ``MIN_STEP_DETOURS`` typical detours are outside its range: the noise is evaluated at that
  shortest step (clamped) and :func:`out_of_range` says so (the resources stage adds it to the
  warnings).

Persistent spread versus per-iteration noise. The GPU-to-GPU spread is a fixed property of each
GPU (manufacturing and power management), not a fresh draw every step: the slowest GPU of the job
sets the pace of every iteration. The host-stack noise is drawn anew each step. For the *expected*
step time with normal noise the two cases agree: with ``g_i`` persistent and ``h_i`` per step, both
independent normal, ``max_i(g_i + h_i)`` has the law of the maximum of n draws of ``N(0, gpu_cv**2 +
host_cv**2)`` whichever GPUs the job got, so one combined ``sigma`` per worker is exact for the mean
(the timeline, which plays iterations out one by one, is where the difference would show).
The persistent part cannot exceed the spread of the installed population: Sinha et al. report
about 8 % average performance variation between identical GPUs of whole clusters (outliers, up to
1.5x slower than the median, are drained by operators and not modelled), so the slowest GPU sits
roughly 4 % behind the median. ``gpu_cv * E[max]`` is 2.7 % at 32 GPUs, 4.6 % at 3,072 and 5.2 % at
16,384: above a few thousand GPUs the normal model over-states the persistent wait by up to about
one point. No cap is applied because that 4 % bound is itself a rough reading of the published
range; this is a known, documented over-estimate at the largest sizes.

Calibration. The slowest-GPU wait is already inside any throughput measured end to end on many
GPUs. A catalog ``gemm_efficiency`` derived from such a run describes the job, not the median GPU;
a consistent derivation divides the measured throughput by ``1 - straggler share`` of that run
(see the report of issue 3 for the A100 figure).
"""

from __future__ import annotations

import math

import numpy as np
from designer.engine.mathfns import log_ndtr, poisson_cdf_table

#: detours per step from which the host noise is treated as normal (skewness of the compound
#: Poisson sum is about 1.5/sqrt(mu) for exponential detours: under 0.1 from here on)
NORMAL_MIN_DETOURS = 200.0
#: shortest step the model covers, in typical detours (a detour is then at most ~10 % of a step)
MIN_STEP_DETOURS = 10.0


def detour_moments(mean_s: float, cap_s: float) -> tuple[float, float]:
    """``E[D]`` and ``E[D^2]`` of an exponential detour length of mean ``mean_s`` truncated at
    ``cap_s`` (closed forms of the truncated exponential). No cap (``cap_s <= 0``): untruncated."""
    m = float(mean_s)
    if m <= 0:
        return 0.0, 0.0
    if cap_s <= 0 or not math.isfinite(cap_s):
        return m, 2.0 * m * m
    z = cap_s / m
    ez = math.exp(-z)
    norm = -math.expm1(-z)
    return (m * (1.0 - (z + 1.0) * ez) / norm,
            m * m * (2.0 - (z * z + 2.0 * z + 2.0) * ez) / norm)


def effective_step(iteration_s: float, detour_mean_s: float) -> float:
    """The step the noise is evaluated at: ``iteration_s``, clamped up to ``MIN_STEP_DETOURS``
    typical detours (see :func:`out_of_range`)."""
    return max(iteration_s, MIN_STEP_DETOURS * detour_mean_s)


def out_of_range(iteration_s: float, detour_mean_s: float) -> str:
    """Why the straggler model does not cover a step of ``iteration_s`` ("" when it does)."""
    if detour_mean_s <= 0 or iteration_s >= MIN_STEP_DETOURS * detour_mean_s:
        return ""
    return (f"the iteration ({iteration_s * 1e6:.0f} us) is shorter than {MIN_STEP_DETOURS:g} typical "
            f"host detours ({detour_mean_s * 1e6:.0f} us each), outside the straggler model's range: "
            f"host noise is evaluated at a {MIN_STEP_DETOURS * detour_mean_s * 1e6:.0f} us step "
            f"(clamped), so the straggler term is an estimate")


def detours_per_step(infra_fraction: float, iteration_s: float, detour_mean_s: float,
                     detour_s: float) -> float:
    """Expected host detours of one worker in one step (``mu``)."""
    e1, _ = detour_moments(detour_mean_s, detour_s)
    if infra_fraction <= 0 or e1 <= 0 or iteration_s <= 0:
        return 0.0
    return min(infra_fraction, 1.0) * effective_step(iteration_s, detour_mean_s) / e1


def host_cv(infra_fraction: float, detour_s: float, iteration_s: float,
            detour_mean_s: float | None = None) -> float:
    """Coefficient of variation of a step from host-stack detours (see module docstring):
    ``sqrt(f * E[D^2]/E[D] / T)``. ``detour_mean_s`` None: every detour lasts ``detour_s`` (the
    fixed-length case, ``E[D^2]/E[D] = detour_s``)."""
    if infra_fraction <= 0 or iteration_s <= 0:
        return 0.0
    if detour_mean_s is None:
        ratio, T = detour_s, iteration_s
    else:
        e1, e2 = detour_moments(detour_mean_s, detour_s)
        ratio, T = (e2 / e1 if e1 > 0 else 0.0), effective_step(iteration_s, detour_mean_s)
    return float(np.sqrt(min(infra_fraction, 1.0) * ratio / T))


def worker_sigma(gpu_cv: float, host_cv_: float) -> float:
    return float(np.hypot(gpu_cv, host_cv_))


def expected_max(sigmas, counts) -> float:
    """E[max] of independent zero-mean normals, ``counts[g]`` of them with spread ``sigmas[g]``.

    One worker in total gives 0 (no one to wait for). Computed as
    ``E[M] = int_0^inf (1 - F) dx - int_-inf^0 F dx`` on two grids of 2,001 points over [0, 10 sigma].
    """
    s = np.asarray(sigmas, dtype=float)
    n = np.asarray(counts, dtype=float)
    keep = (n > 0) & (s > 0)
    s, n = s[keep], n[keep]
    if n.sum() <= 1 or s.size == 0:
        return 0.0
    x = np.linspace(0.0, 10.0 * s.max(), 2001)

    def cdf(points):
        return np.exp((n[:, None] * log_ndtr(points[None, :] / s[:, None])).sum(axis=0))

    return float(np.trapezoid(1.0 - cdf(x), x) - np.trapezoid(cdf(-x), x))


def expected_max_workers(gpu_cv: list[float], infra_fraction: list[float], counts: list[int], *,
                         iteration_s: float, detour_mean_s: float, detour_s: float) -> float:
    """E[max] over all workers of ``g + h`` (see the module docstring), in units of the step.

    Groups ``k`` have ``counts[k]`` workers with GPU spread ``gpu_cv[k]`` and host infrastructure
    share ``infra_fraction[k]``. With many detours per step in every group the normal formula
    (:func:`expected_max` of the combined sigmas) is used; otherwise the compound-Poisson law:
    ``P(h > x)`` is a Poisson(mu) mixture of Gamma(k, detour_mean_s/T) survival functions (the
    sum of k exponential detours; the cap, ~60 typical detours, is left out here), averaged over
    the GPU spread by 24-point Gauss-Hermite quadrature; ``E[M] = int_0^inf (1 - F) - int_-inf^0 F``
    on a 2,001-point grid.
    """
    if not (math.isfinite(iteration_s) and iteration_s > 0):
        return 0.0  # no finite step: nothing to wait for on top of it
    T = effective_step(iteration_s, detour_mean_s)
    e1, e2 = detour_moments(detour_mean_s, detour_s)
    mus = [min(max(f, 0.0), 1.0) * T / e1 if e1 > 0 else 0.0 for f in infra_fraction]
    if all(mu == 0.0 or mu >= NORMAL_MIN_DETOURS for mu in mus):
        sig = [worker_sigma(g, float(np.sqrt(mu * e2) / T)) for g, mu in zip(gpu_cv, mus)]
        return expected_max(sig, counts)
    if sum(counts) <= 1:
        return 0.0
    scale = detour_mean_s / T  # one typical detour in units of the step
    spread = max(gpu_cv) * 9.0
    hi = spread + (max(mus) + 12.0 * math.sqrt(max(mus)) + 12.0) * scale * 2.0
    lo = -(spread + max(mus) * scale + 1e-12)
    dx = (hi - lo) / 4000.0
    lo = -math.ceil(-lo / dx) * dx  # 0 on the grid: the integral is split there
    x = lo + dx * np.arange(int(math.ceil((hi - lo) / dx)) + 1)
    log_cdf = np.zeros_like(x)
    for g, mu, n in zip(gpu_cv, mus, counts):
        if n <= 0:
            continue
        # survival of h = S/T - f on the grid, extended by the GPU spread's reach on both sides
        reach = int(math.ceil(9.0 * g / dx)) if g > 0 else 0
        xe = lo + dx * np.arange(-reach, x.size + reach)
        y = xe + mu * scale  # stolen time / T needed to exceed x
        # detours k >= 1: a continuous law (Gamma sums), convolved with the GPU spread on the grid
        cont = np.zeros_like(xe)
        if mu > 0:
            kmax = int(mu + 12.0 * math.sqrt(mu) + 12.0)
            k = np.arange(1, kmax + 1)
            pk = np.exp(k * math.log(mu) - mu - np.array([math.lgamma(v + 1.0) for v in k]))
            q = poisson_cdf_table(kmax, np.clip(y, 0.0, None) / scale)  # Q(k, y): gammaincc
            cont = (pk[:, None] * q).sum(axis=0)
        if reach:
            off = dx * np.arange(-reach, reach + 1)
            w = np.exp(-0.5 * (off / g) ** 2)
            cont = np.convolve(cont, w / w.sum(), mode="valid")
        # no detour (probability e^-mu): the GPU spread alone, exactly
        shift = x + mu * scale
        none = (np.exp(log_ndtr(-shift / g)) if g > 0 else (shift < 0).astype(float)) * math.exp(-mu)
        surv = cont + none
        log_cdf += n * np.log1p(-np.clip(surv, 0.0, 1.0 - 1e-16))
    cdf = np.exp(log_cdf)
    pos, neg = x >= 0, x <= 0
    return float(np.trapezoid(1.0 - cdf[pos], x[pos]) - np.trapezoid(cdf[neg], x[neg]))


def equivalent_sigma(e_max: float, counts: list[int]) -> float:
    """The normal per-worker spread whose expected maximum over ``sum(counts)`` workers is
    ``e_max`` (what the timeline draws, so that its average straggler wait matches)."""
    unit = expected_max([1.0], [sum(counts)])
    return e_max / unit if unit > 0 else 0.0
