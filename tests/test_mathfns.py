"""designer.engine.mathfns against scipy.special (the functions it stands in for, issue 15)."""

import numpy as np
import pytest

from designer.engine import mathfns

special = pytest.importorskip("scipy.special")


def test_log_ndtr_matches_scipy():
    z = np.concatenate([np.linspace(-60, 40, 20001), [-1e3, -35.0, -30.0, -29.999, 0.0, 1e-300, 8.3, 39.0]])
    ours, ref = mathfns.log_ndtr(z), special.log_ndtr(z)
    assert np.allclose(ours, ref, rtol=1e-12, atol=1e-300)  # scipy flushes |values| < 1e-300 to 0
    assert mathfns.log_ndtr(-1.0) == pytest.approx(float(special.log_ndtr(-1.0)), rel=1e-14)


def test_poisson_cdf_table_matches_pdtr_and_gammaincc():
    y = np.concatenate([[0.0, 1e-12, 0.3], np.linspace(0.0, 600.0, 1201)])
    kmax = 700
    table = mathfns.poisson_cdf_table(kmax, y)
    k = np.arange(1, kmax + 1)[:, None]
    ref = special.gammaincc(k, y[None, :])
    assert table.shape == ref.shape
    # relative on values that matter (the engine sums them), absolute below 1e-290
    assert np.allclose(table, ref, rtol=1e-12, atol=1e-290)
    lam = 37.5
    assert np.allclose(mathfns.poisson_cdf_table(200, lam)[:, 0], special.pdtr(np.arange(200), lam),
                       rtol=1e-12, atol=1e-290)


def test_poisson_cdf_table_far_tail():
    """y up to 1,000 (the jitter grid reaches ~800): each term is exp of an argument near -1,000,
    whose rounding alone is ~1e-13 relative, so 5e-12 here."""
    y = np.linspace(600.0, 1000.0, 401)
    k = np.arange(1, 701)[:, None]
    assert np.allclose(mathfns.poisson_cdf_table(700, y), special.gammaincc(k, y[None, :]),
                       rtol=5e-12, atol=1e-290)
