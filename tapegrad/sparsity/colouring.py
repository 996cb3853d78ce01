"""Graph colouring of a sparsity pattern, and the plan that decompresses ``J S`` into ``J``.

Columns of one colour are summed into one tangent direction, so ``c`` colours need ``c``
Jacobian-vector products instead of ``n``. Two colourings:

- ``distance2_colouring``: columns that share a row get different colours, so every entry
  can be read directly (``J[i, j] = (J S)[i, colour[j]]``). Right for any Jacobian.
- ``star_colouring``: for a symmetric pattern (a Hessian): a distance-1 colouring in which
  every path on four vertices has at least three colours. Each entry is then read directly
  or through symmetry (``H[i, j] = (H S)[j, colour[i]]``); an arrowhead needs 2 colours
  where distance-2 needs ``n``.

``Plan`` checks that every entry can be recovered, so a colouring that was wrong would be
refused (``make_plan`` returns None) rather than give wrong values.

>>> import numpy as np
>>> tri = np.eye(6, dtype=bool) | np.eye(6, k=1, dtype=bool) | np.eye(6, k=-1, dtype=bool)
>>> distance2_colouring(tri).tolist()
[0, 1, 2, 0, 1, 2]
"""
from typing import NamedTuple

import numpy as np


def distance2_colouring(pattern):
    """Greedy colours (an int array, one per column) with no two columns sharing a row."""
    p = np.asarray(pattern, bool)
    n = p.shape[1]
    pf = p.astype(np.float32)  # BLAS; the counts stay exact far beyond any usable size
    conflict = (pf.T @ pf) > 0  # columns j, k meet in some row
    colours = np.full(n, -1, np.int64)
    for j in range(n):
        used = colours[conflict[j]]
        mark = np.zeros(n + 1, bool)
        mark[used[used >= 0]] = True
        colours[j] = int(np.argmin(mark))  # the first colour no neighbour has
    return colours


STAR_BUDGET = 4_000_000  # inner-loop steps the greedy star colouring may take


def star_colouring(pattern):
    """Greedy star colouring of a symmetric pattern (Gebremedhin, Manne and Pothen, 2005,
    Algorithm 4.1); None when the pattern is too dense for it to be worth the time."""
    p = np.asarray(pattern, bool)
    n = p.shape[0]
    adj = [[int(k) for k in np.flatnonzero(p[v]) if k != v] for v in range(n)]
    deg = np.array([len(a) for a in adj], np.int64)
    if int((deg ** 2).sum()) * (int(deg.max(initial=0)) + 1) > STAR_BUDGET:
        return None
    colour = [-1] * n
    forbidden = [-1] * (n + 1)  # forbidden[c] == v: colour c is not allowed for v
    for v in range(n):
        for w in adj[v]:
            cw = colour[w]
            if cw >= 0:
                forbidden[cw] = v
            for x in adj[w]:
                cx = colour[x]
                if x == v or cx < 0:
                    continue
                if cw < 0:
                    forbidden[cx] = v  # v-w-x with w uncoloured: x's colour is taken
                else:  # a path v-w-x-y with colour[y] == colour[w] would be bicoloured
                    for y in adj[x]:
                        if y != w and colour[y] == cw:
                            forbidden[cx] = v
                            break
        c = 0
        while forbidden[c] == v:
            c += 1
        colour[v] = c
    return np.array(colour, np.int64)


class Plan(NamedTuple):
    """How to evaluate and decompress: ``directions`` (c, n) holds the tangents; the result's
    flat entries ``dst`` (into ``m * n``) take the values ``R.ravel()[src]`` of the
    compressed rows ``R = (J @ directions.T).T`` of shape (c, m); every other entry is zero."""

    colours: np.ndarray
    directions: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    shape: tuple
    scatter: tuple = None  # direct plans: (rows, cols), each (c, m): where R[k, i] goes

    @property
    def n_colours(self):
        return self.directions.shape[0]


def make_plan(pattern, colours, symmetric=False):
    """The ``Plan`` for ``pattern`` (m, n) and column ``colours``; None if some entry could
    not be recovered (two columns of one colour meet in its row, and symmetry cannot help)."""
    p = np.asarray(pattern, bool)
    m, n = p.shape
    c = int(colours.max(initial=-1)) + 1
    onehot = np.zeros((n, max(c, 1)), np.int32)
    onehot[np.arange(n), colours] = 1
    counts = p.astype(np.int32) @ onehot  # (m, c): entries of each colour in each row
    rows, cols = np.nonzero(p)
    src = colours[cols] * m + rows
    bad = counts[rows, colours[cols]] != 1
    scatter = None
    if not bad.any():
        # Every compressed entry R[k, i] holds at most one entry of row i, so one scatter of
        # all of R decompresses. An entry that holds none goes to a spare column ``n`` that
        # is cut off: it is zero only where everything is finite (a NaN that reached it
        # would otherwise be added onto a real entry).
        target = np.full((max(c, 1), m), n, np.int64)
        target[colours[cols], rows] = cols
        scatter = (np.broadcast_to(np.arange(m), target.shape).copy(), target)
    if bad.any():
        if not symmetric:
            return None
        r, k = rows[bad], cols[bad]
        if (counts[k, colours[r]] != 1).any():
            return None
        src[bad] = colours[r] * m + k  # H[r, k] = H[k, r], read from row k
    directions = np.zeros((c, n))
    directions[colours, np.arange(n)] = 1.0
    order = np.argsort(rows * n + cols, kind="stable")
    return Plan(colours, directions, src[order], (rows * n + cols)[order], (m, n), scatter)


def _dense_rows(p):
    # a row with more than half of the columns needs that many distance-2 colours: such a
    # colouring cannot pay, and its conflict graph would be the expensive part
    return p.shape[1] > 1 and int(p.sum(axis=1).max(initial=0)) > p.shape[1] // 2


def hessian_plan(pattern):
    """The best plan for a Hessian pattern: the star or the distance-2 colouring of its
    symmetrised pattern, whichever needs fewer colours; None if neither can pay."""
    p = np.asarray(pattern, bool)
    p = p | p.T  # the Hessian is symmetric even where the detection saw only one side
    plans = []
    star = star_colouring(p)
    if star is not None:
        plans.append(make_plan(p, star, symmetric=True))
    if not _dense_rows(p):
        plans.append(make_plan(p, distance2_colouring(p)))
    plans = [q for q in plans if q is not None]
    # ties go to a direct plan: it decompresses with one scatter
    return min(plans, key=lambda q: (q.n_colours, q.scatter is None)) if plans else None


def jacobian_plan(pattern):
    """The plan of a distance-2 column colouring (forward mode, ``c`` JVPs); None if it
    cannot pay."""
    p = np.asarray(pattern, bool)
    return None if _dense_rows(p) else make_plan(p, distance2_colouring(p))
