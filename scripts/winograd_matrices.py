#!/usr/bin/env python3
"""Derives the Winograd transforms of worker/tensor/cpu/winograd_conv.cc and measures the
fp32 error of candidate interpolation points.

For the correlation y[i] = sum_k g[k] d[i + k] (i < m, k < r) and n = m + r - 1 points
(n - 1 finite ones and infinity), Toom-Cook gives y = A^T [(G g) * (B^T d)] with
  A^T[i][j] = a_j^i (the last column: 1 in the last row only),
  G[j][k]   = a_j^k / prod over l != j of (a_j - a_l) (the last row picks g[r - 1]),
and B^T the unique matrix that makes the identity hold, solved for here. Printed as
fractions, for F(m, 4) (the forward and backward-data passes) and F(4, m) (the backward-
weights pass, whose "kernel" is an m x m tile of the output gradient); the two share B^T.

  /usr/bin/python3 scripts/winograd_matrices.py            # the matrices in use
  /usr/bin/python3 scripts/winograd_matrices.py --compare  # fp32 error of point sets

Needs numpy (Debian's python3-numpy).
"""
import argparse
from fractions import Fraction

import numpy as np

IN_USE = (3, [0, 1, -1, -2, 0.5])  # m and the finite points of winograd_conv.cc


def transforms(m, r, points):
    n = m + r - 1
    assert len(points) == n - 1, "need m + r - 2 finite points"
    at = np.zeros((m, n))
    g = np.zeros((n, r))
    for i in range(m):
        for j, a in enumerate(points):
            at[i, j] = a ** i
        at[i, n - 1] = 1.0 if i == m - 1 else 0.0
    for j, a in enumerate(points):
        scale = np.prod([a - b for l, b in enumerate(points) if l != j])
        for k in range(r):
            g[j, k] = a ** k / scale
    g[n - 1, r - 1] = 1.0
    # sum over l of AT[i][l] G[l][k] BT[l][j] = [j == i + k] for every i, k, j.
    rows, rhs = [], []
    for i in range(m):
        for k in range(r):
            for j in range(n):
                row = np.zeros((n, n))
                row[:, j] = at[i, :] * g[:, k]
                rows.append(row.ravel())
                rhs.append(1.0 if j == i + k else 0.0)
    solution, _, rank, _ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    residual = np.abs(np.array(rows) @ solution - np.array(rhs)).max()
    assert rank == n * n and residual < 1e-9, f"no exact B^T for points {points}"
    return at, g, solution.reshape(n, n)


def as_fractions(matrix):
    return [[str(Fraction(v).limit_denominator(1000)) for v in row] for row in matrix]


def direct(x, w):
    k = w.shape[-1]
    out_size = x.shape[-1] - k + 1
    out = np.zeros((w.shape[0], out_size, out_size), x.dtype)
    for ky in range(k):
        for kx in range(k):
            out += np.einsum("oc,chw->ohw", w[:, :, ky, kx], x[:, ky:ky + out_size, kx:kx + out_size])
    return out


def winograd_fp32(x, w, m, points):
    at, g, bt = (t.astype(np.float32) for t in transforms(m, 4, points))
    n = m + 3
    size = x.shape[-1] - 3
    tiles = (size + m - 1) // m
    padded = np.zeros((x.shape[0], m * tiles + 3, m * tiles + 3), np.float32)
    padded[:, :x.shape[1], :x.shape[2]] = x
    v = np.zeros((n, n, x.shape[0], tiles, tiles), np.float32)
    for ty in range(tiles):
        for tx in range(tiles):
            patch = padded[:, m * ty:m * ty + n, m * tx:m * tx + n]
            v[:, :, :, ty, tx] = np.einsum("ai,cij,bj->abc", bt, patch, bt)
    u = np.einsum("ai,ocij,bj->aboc", g, w, g).astype(np.float32)
    products = np.einsum("aboc,abcyx->aboyx", u, v).astype(np.float32)
    y = np.einsum("ia,aboyx,jb->oyixj", at, products, at)
    return y.reshape(w.shape[0], m * tiles, m * tiles)[:, :size, :size]


def compare():
    rng = np.random.default_rng(1)
    channels, outs, side = 256, 32, 34  # PatchGAN's conv4 input at 256 px, padded: 31x31 out
    x = rng.standard_normal((channels, side, side)).astype(np.float32)
    w = (rng.standard_normal((outs, channels, 4, 4)) * 0.02).astype(np.float32)
    exact = direct(x.astype(np.float64), w.astype(np.float64))
    scale = direct(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64)).max()
    print(f"norm-wise error (max |y - exact| / max magnitude), {channels} channels, 4x4 kernel:")
    print(f"  direct fp32 sum          {np.abs(direct(x, w) - exact).max() / scale:.2g}")
    for m, points in ((2, [0, 1, -1, 0.5]), (2, [0, 1, -1, 2]), (3, [0, 1, -1, 2, -2]), (3, [0, 1, -1, 0.5, -0.5]),
                      (3, [0, 1, -1, -2, 0.5]), (3, [0, 1, -1, -0.5, 2])):
        err = np.abs(winograd_fp32(x, w, m, points) - exact).max() / scale
        print(f"  F({m}x{m}, 4x4) at {points}: {err:.2g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="store_true", help="measure the fp32 error of candidate point sets")
    args = parser.parse_args()
    if args.compare:
        compare()
        return
    m, points = IN_USE
    at, g, bt = transforms(m, 4, points)
    at4, g3, bt4 = transforms(4, m, points)
    assert np.abs(bt - bt4).max() < 1e-9, "F(m, 4) and F(4, m) should share B^T"
    print(f"points {points} and infinity")
    for name, matrix in ((f"F({m},4) A^T", at), (f"F({m},4) G", g), ("B^T (both)", bt), (f"F(4,{m}) A^T", at4),
                         (f"F(4,{m}) G", g3)):
        print(name)
        for row in as_fractions(matrix):
            print("  " + "  ".join(f"{v:>6}" for v in row))


if __name__ == "__main__":
    main()
