"""The fused linear-JSD head's per-logit math, shared by its row kernel (fused_linear_jsd.py) and the
tiled candidate's sweep (fused_linear_jsd_tiled.py), so the two variants cannot drift apart.

Inputs are base-2 log-probabilities x2 = X log2(e), y2 = Y log2(e) of the student and teacher;
MODE 0 is beta = 0 (forward KL, P (Y - X)), MODE 1 beta = 1 (reverse KL, Q (X - Y)), MODE 2 the
general beta with M = beta P + (1 - beta) Q. Terms are in units of ln 2 until the caller's row sum
multiplies by ln 2.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .jsd import _exp2, _log2


@triton.jit
def loss_terms(x2, y2, beta, MODE: tl.constexpr, FAST: tl.constexpr):
    """(t1, t2) of one tile: the loss is ln2 (sum t1 + beta sum t2) for MODE 2, ln2 sum t1 otherwise."""
    if MODE == 0:
        t1 = _exp2(y2, FAST) * (y2 - x2)  # P (Y - X)
        t2 = t1
    elif MODE == 1:
        t1 = _exp2(x2, FAST) * (x2 - y2)  # Q (X - Y)
        t2 = t1
    else:
        p = _exp2(y2, FAST)
        aq = (1.0 - beta) * _exp2(x2, FAST)
        l2m = _log2(beta * p + aq, FAST)
        t1 = aq * (x2 - l2m)  # (1-beta) Q (X - log M)
        t2 = p * (y2 - l2m)  # P (Y - log M), times beta by the caller
    return t1, t2


@triton.jit
def dz_terms(x2, y2, s1, beta, MODE: tl.constexpr, FAST: tl.constexpr):
    """dLoss/dz of one tile before the 1/(n T) scale; s1 = ln2 sum t1, the row sum the softmax's
    Jacobian subtracts."""
    if MODE == 0:
        d = _exp2(x2, FAST) - _exp2(y2, FAST)
    elif MODE == 1:
        d = _exp2(x2, FAST) * ((x2 - y2) * 0.6931471805599453 - s1)
    else:
        q = _exp2(x2, FAST)
        l2m = _log2(beta * _exp2(y2, FAST) + (1.0 - beta) * q, FAST)
        d = q * ((1.0 - beta) * 0.6931471805599453 * (x2 - l2m) - s1)
    return d


@triton.jit
def row_loss(acc1, acc2, beta, MODE: tl.constexpr):
    """(s1, loss) of a row from its summed loss_terms: s1 = ln2 sum t1, the row sum dz_terms takes."""
    s1 = tl.sum(acc1, 0) * 0.6931471805599453
    if MODE == 2:
        loss = s1 + beta * tl.sum(acc2, 0) * 0.6931471805599453
    else:
        loss = s1
    return s1, loss
