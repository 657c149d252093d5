"""Connected parts of a graph given as an edge list, with numpy (no Qt, no networkx): used by the
validator (parts of the whole design) and the engine's network stage (parts of the switch graph)."""

from __future__ import annotations

import numpy as np


def lowest_labels(size: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """For each of ``size`` nodes, the lowest node index of its connected part over the undirected
    edges ``u[i] - v[i]``.

    Hook and compress (Shiloach and Vishkin, J. Algorithms 3(1), 1982) over the edge list: each
    round every edge whose ends carry different labels hooks the root of the higher label onto the
    lower one (``minimum.at``), then labels follow their roots until each is a root. Labels only
    move to lower nodes of the same part, so a part's lowest node stays its root, and the rounds
    end, when no edge joins two labels, with one label per part: its lowest node. The rounds are
    whole-array operations; their number grows with the logarithm of the parts' diameter."""
    label = np.arange(size, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    while True:
        lu, lv = label[u], label[v]
        differ = lu != lv
        if not differ.any():
            return label
        lu, lv = lu[differ], lv[differ]
        np.minimum.at(label, np.maximum(lu, lv), np.minimum(lu, lv))
        while True:
            up = label[label]
            if np.array_equal(up, label):
                break
            label = up
