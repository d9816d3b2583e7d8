"""The input layer over the observation's active features (compiled, CPU).

A blot observation is mostly zeros: on ``bazar`` about 40 to 70 of its 1,459 entries are
non-zero (one-hot pieces and card bitmasks). A dense ``Linear(D, H)`` spends ``D * H``
multiply-adds per row on it; :class:`SparseLinear` spends ``nnz * H``: it gathers the weight
rows of the active features, scaled by their values, and sums them (an embedding sum), and its
backward pass scatters the output gradient back into those rows only.

The numbers are those of the dense layer (``x @ W.T + b``) up to float32 summation order; the
kernels are numba loops over the rows, deterministic for a given machine and thread count.
On a device other than the CPU the layer computes the dense product instead.

Inputs are the engine's ``uint8`` numerators (``BatchedEngine(obs_dtype="uint8")``) and the
encoder's ``quantum`` (value = numerator times quantum); several arrays of a row are read as
one input (the critic's observation and privileged features).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import torch
from torch import Tensor, nn


@numba.njit(cache=True, nogil=True)
def _extract(a, qa, b, qb):
    """CSR of the non-zero entries of the rows of ``[a, b]`` (``uint8[B, Da]``, ``uint8[B, Db]``;
    ``Db`` may be 0): ``(offsets int64[B + 1], index int32[nnz], value float32[nnz])`` with
    value = numerator times ``qa`` / ``qb``."""
    B, Da = a.shape
    Db = b.shape[1]
    offsets = np.zeros(B + 1, dtype=np.int64)
    for r in range(B):
        c = 0
        for j in range(Da):
            if a[r, j] != 0:
                c += 1
        for j in range(Db):
            if b[r, j] != 0:
                c += 1
        offsets[r + 1] = offsets[r] + c
    nnz = offsets[B]
    index = np.empty(nnz, dtype=np.int32)
    value = np.empty(nnz, dtype=np.float32)
    for r in range(B):
        k = offsets[r]
        for j in range(Da):
            x = a[r, j]
            if x != 0:
                index[k] = j
                value[k] = np.float32(x) * qa[j]
                k += 1
        for j in range(Db):
            x = b[r, j]
            if x != 0:
                index[k] = Da + j
                value[k] = np.float32(x) * qb[j]
                k += 1
    return offsets, index, value


@numba.njit(cache=True, nogil=True)
def _take(offsets, index, value, rows):
    """The CSR arrays of the rows ``rows`` (``int64[k]``, in that order) of a CSR batch."""
    k = rows.shape[0]
    out_off = np.zeros(k + 1, dtype=np.int64)
    for i in range(k):
        r = rows[i]
        out_off[i + 1] = out_off[i] + offsets[r + 1] - offsets[r]
    out_idx = np.empty(out_off[k], dtype=np.int32)
    out_val = np.empty(out_off[k], dtype=np.float32)
    for i in range(k):
        r = rows[i]
        o = out_off[i]
        for j in range(offsets[r], offsets[r + 1]):
            out_idx[o] = index[j]
            out_val[o] = value[j]
            o += 1
    return out_off, out_idx, out_val


@numba.njit(cache=True, nogil=True, fastmath=True)
def _forward(offsets, index, value, W, bias, out):
    """``out[r] = bias + sum_k value[k] * W[index[k]]`` over row ``r``'s entries (``W float32[D, H]``)."""
    B = offsets.shape[0] - 1
    H = W.shape[1]
    for r in range(B):
        o = out[r]
        for h in range(H):
            o[h] = bias[h]
        for k in range(offsets[r], offsets[r + 1]):
            w = value[k]
            row = W[index[k]]
            for h in range(H):
                o[h] += w * row[h]


@numba.njit(cache=True, nogil=True, fastmath=True)
def _backward(offsets, index, value, G, gW):
    """``gW[index[k]] += value[k] * G[r]`` (gW zeroed first): the weight gradient of :func:`_forward`."""
    B = offsets.shape[0] - 1
    H = G.shape[1]
    gW[:] = 0.0
    for r in range(B):
        g = G[r]
        for k in range(offsets[r], offsets[r + 1]):
            w = value[k]
            row = gW[index[k]]
            for h in range(H):
                row[h] += w * g[h]


class SparseInput:
    """The active entries of a batch of rows, ready for :class:`SparseLinear` (CSR arrays)."""

    __slots__ = ("batch", "index", "offsets", "value")

    def __init__(self, offsets: np.ndarray, index: np.ndarray, value: np.ndarray) -> None:
        self.offsets, self.index, self.value = offsets, index, value
        self.batch = offsets.shape[0] - 1

    @classmethod
    def from_numerators(cls, parts: list[tuple[Tensor, Tensor]]) -> SparseInput:
        """From one or two ``(uint8[B, D_i] numerators, float32[D_i] quantum)`` pairs (CPU tensors)."""
        a, qa = parts[0]
        if len(parts) > 1:
            b, qb = parts[1]
        else:
            b, qb = a[:, :0], qa[:0]
        off, idx, val = _extract(_np(a), _np(qa), _np(b), _np(qb))
        return cls(off, idx, val)

    def take(self, rows: np.ndarray | Tensor) -> SparseInput:
        """The rows ``rows`` (``int64[k]`` indices, in that order) of this batch: the same entries
        as extracting those rows again, without rescanning the dense rows (PPO's minibatches)."""
        r = rows.numpy() if isinstance(rows, Tensor) else rows
        return SparseInput(*_take(self.offsets, self.index, self.value, np.ascontiguousarray(r, dtype=np.int64)))


def _np(t: Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().numpy())


class _SparseMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight: Tensor, bias: Tensor, x: SparseInput) -> Tensor:
        out = torch.empty((x.batch, weight.shape[1]), dtype=torch.float32)
        _forward(x.offsets, x.index, x.value, weight.detach().numpy(), bias.detach().numpy(), out.numpy())
        ctx.x = x
        ctx.shape = weight.shape
        return out

    @staticmethod
    def backward(ctx, grad: Tensor):
        x = ctx.x
        gW = torch.empty(ctx.shape, dtype=torch.float32)
        _backward(x.offsets, x.index, x.value, np.ascontiguousarray(grad.detach().numpy()), gW.numpy())
        return gW, grad.sum(0), None


class SparseLinear(nn.Module):
    """``Linear(in_features, out_features)`` over a :class:`SparseInput` (CPU) or a dense float
    tensor (any device).

    The weight is stored as ``float32[in_features, out_features]`` (a row per input feature, so
    that an active feature reads one contiguous row), initialised like :func:`layer_init` of the
    dense layer (orthogonal with gain ``std``, constant bias).
    """

    def __init__(self, in_features: int, out_features: int, std: float = math.sqrt(2), bias: float = 0.0):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        w = torch.empty(out_features, in_features)
        nn.init.orthogonal_(w, std)
        self.weight = nn.Parameter(w.t().contiguous())
        self.bias = nn.Parameter(torch.full((out_features,), float(bias)))

    def forward(self, x: SparseInput | Tensor) -> Tensor:
        if isinstance(x, SparseInput):
            return _SparseMatmul.apply(self.weight, self.bias, x)
        return torch.addmm(self.bias, x, self.weight)


__all__ = ["SparseInput", "SparseLinear"]
