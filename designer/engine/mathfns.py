"""The few special functions the engine needs, in numpy and :mod:`math` (importing
``scipy.special`` costs about a quarter of a second of every ``dpu-designer run``; issue 15).

- :func:`log_ndtr`: log of the standard normal CDF, ``log Phi(z)``. Phi(z) = erfc(-z/sqrt 2)/2
  (Abramowitz & Stegun 7.1.2 and 26.2.29), taken as ``log(erfc(-z/sqrt 2)/2)`` for z <= 0 and
  ``log1p(-erfc(z/sqrt 2)/2)`` for z > 0 (so both tails keep their relative precision); below
  z = -30, where erfc would soon underflow, by the asymptotic series of Mills' ratio
  (A&S 26.2.12: Phi(z) = phi(z)/|z| (1 - 1/z^2 + 1*3/z^4 - 1*3*5/z^6 + ...); eight terms, the
  first left out below 1e-22 relative at |z| = 30).
- :func:`poisson_cdf_table`: ``P(N <= k - 1)`` for N ~ Poisson(y), k = 1..kmax, which is also
  the regularized upper incomplete gamma function Q(k, y) of integer k (A&S 6.5.13 and 26.4.21):
  ``Q(k, y) = e^-y sum_{j<k} y^j / j!``, summed from the terms ``exp(j ln y - y - ln j!)``.

tests/test_mathfns.py compares them with scipy.special (log_ndtr, gammaincc, pdtr) to 1e-12.
"""

from __future__ import annotations

import math

import numpy as np

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_ASYMPTOTIC_BELOW = -30.0

_erfc = np.frompyfunc(math.erfc, 1, 1)


def log_ndtr(z) -> np.ndarray | float:
    """``log Phi(z)`` elementwise (same values as ``scipy.special.log_ndtr`` to ~1e-15)."""
    arr = np.asarray(z, dtype=float)
    out = np.empty(arr.shape)
    low = arr <= 0.0
    far = arr < _ASYMPTOTIC_BELOW
    mid = low & ~far
    if mid.any():
        out[mid] = np.log(np.asarray(_erfc(-arr[mid] / _SQRT2), dtype=float) * 0.5)
    high = ~low & ~np.isnan(arr)
    if high.any():
        out[high] = np.log1p(-0.5 * _erfc(arr[high] / _SQRT2).astype(float))
    if far.any():
        x = arr[far]
        inv = 1.0 / (x * x)
        series, term = np.ones_like(x), np.ones_like(x)
        for n in range(1, 8):
            term = term * (-(2 * n - 1)) * inv
            series = series + term
        out[far] = -0.5 * x * x - np.log(-x) - _LOG_SQRT_2PI + np.log(series)
    out[np.isnan(arr)] = np.nan
    return out if out.ndim else float(out)


def poisson_cdf_table(kmax: int, y) -> np.ndarray:
    """``T[k - 1, i] = P(Poisson(y[i]) <= k - 1) = Q(k, y[i])`` for k = 1..kmax (rows), y >= 0.

    ``scipy.special.pdtr(k - 1, y)`` and ``gammaincc(k, y)`` give the same numbers."""
    yv = np.atleast_1d(np.asarray(y, dtype=float))
    j = np.arange(kmax, dtype=float)[:, None]
    lgam = np.array([math.lgamma(v + 1.0) for v in range(kmax)])[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = j * np.log(yv)[None, :] - yv[None, :] - lgam
    logs[0, :] = -yv  # j = 0: e^-y (0 * log 0 is 0 here)
    return np.cumsum(np.exp(logs), axis=0)
