"""Stragglers: per-worker iteration-time noise and the synchronous step's expected maximum.

Model (documented, figures in ``models/costs/jitter.toml``):

* Every GPU worker's step time is ``T * (1 + e)`` with ``e ~ Normal(0, sigma)``; workers are
  independent.
* ``sigma**2 = gpu_cv**2 + host_cv**2``. ``gpu_cv`` is the GPU-to-GPU performance spread (Sinha et
  al., SC 2022). ``host_cv`` is OS/interrupt noise from host stacks: if a fraction ``f`` of the host's
  cycles goes to infrastructure work that preempts a training thread in detours of ``d`` seconds,
  the number of detours in a step of ``T`` seconds is Poisson with mean ``f*T/d``, so the stolen
  time has standard deviation ``d*sqrt(f*T/d)`` and ``host_cv = sqrt(f*d/T)`` (compound-Poisson noise,
  the model class of Hoefler et al., 'Characterizing the Influence of System Noise on Large-Scale
  Applications by Simulation', SC 2010). Offloading the stacks lowers ``f`` and thus the noise.
* A synchronous step ends when the slowest worker ends: its cost is ``T * E[max_i e_i]``. The
  expectation is computed exactly by integrating the distribution of the maximum,
  ``F(x) = prod_g Phi(x/sigma_g)**n_g``, so it is deterministic and grows with the number of
  workers (about ``sigma*sqrt(2 ln n)`` for many identical workers, the Gumbel limit).

Persistent spread versus per-iteration noise. The GPU-to-GPU spread is a fixed property of each
GPU (manufacturing and power management), not a fresh draw every step: the slowest GPU of the job
sets the pace of every iteration. The host-stack noise is drawn anew each step. For the *expected*
step time the two cases agree: with ``g_i`` persistent and ``h_i`` per step, both independent
normal, ``max_i(g_i + h_i)`` has the law of the maximum of n draws of ``N(0, gpu_cv**2 +
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

import numpy as np
from scipy.special import log_ndtr


def host_cv(infra_fraction: float, detour_s: float, iteration_s: float) -> float:
    """Coefficient of variation of a step from host-stack detours (see module docstring)."""
    if infra_fraction <= 0 or iteration_s <= 0:
        return 0.0
    return float(np.sqrt(min(infra_fraction, 1.0) * detour_s / iteration_s))


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
