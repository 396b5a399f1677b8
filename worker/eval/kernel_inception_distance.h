// The Kernel Inception Distance (KID) of two sets of feature rows (Bińkowski, Sutherland,
// Arbel, Gretton 2018, "Demystifying MMD GANs", ICLR): the unbiased estimate of the
// squared maximum mean discrepancy (MMD^2_u) with the cubic polynomial kernel
//   k(x, y) = (x.y / d + 1)^3,    d the feature size,
// averaged over random subsets as the reference implementation does (Bińkowski's
// compute_scores.py, and torch-fidelity's and clean-fid's KID): `subsets` times, m rows
// of each set are drawn without replacement (m = min(subset_size, n_x, n_y)) and
//   MMD^2_u = sum_{i != j} k(x_i, x_j) / (m (m-1)) + sum_{i != j} k(y_i, y_j) / (m (m-1))
//             - 2 sum_{i, j} k(x_i, y_j) / m^2
// is taken; KID is the mean over the subsets, and the spread their standard deviation
// (numpy's np.std, ddof 0, as torch-fidelity reports it). Defaults: 100 subsets of 1,000
// (torch-fidelity's and clean-fid's; Bińkowski's script used 50).
//
// Unlike the Fréchet distance, the estimate is unbiased whatever the number of rows, so
// two samples of one distribution score 0 on average and single estimates are often
// slightly negative: a KID below 0 is noise around 0, not an error.
//
// Deterministic: the subsets come from a seeded gantry Rng (the same on every machine),
// the kernel sums run in double in a fixed order, so the same rows and options give the
// same bits on one machine. Cost: the kernel matrices of the two sets are computed once
// (n_x^2 + n_y^2 + n_x n_y dot products of length d, in row tiles, never held whole), and
// each subset's sums are masked products with them, so 100 subsets cost little more than
// one (and sets no bigger than a subset, of equal size, are taken whole once).
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

struct KidOptions {
  int64_t subsets = 100;
  int64_t subset_size = 1000;  // rows of each set per subset, at most the smaller set's count
  uint64_t seed = 1;           // of the subsets' draws
};

struct KidEstimate {
  double kid = 0;          // mean of the subsets' MMD^2_u
  double std = 0;          // their standard deviation (ddof 0)
  int64_t subset_size = 0;  // m, as used
  int64_t subsets = 0;
};

// The rows of each subset: `x` indexes the first set, `y` the second (m each, distinct
// within a subset). The draws are a partial Fisher-Yates shuffle per set and subset,
// x's then y's, from Rng(Mix64(seed ^ "kid")).
struct KidSubset {
  std::vector<int64_t> x;
  std::vector<int64_t> y;
};
std::vector<KidSubset> DrawKidSubsets(int64_t n_x, int64_t n_y, const KidOptions& options);

// KID of rows x [n_x, dim] against rows y [n_y, dim] (row-major floats). CHECK-fails
// unless both sets hold at least 2 rows, dim >= 1 and options.subsets >= 1 (callers
// check what users give first).
KidEstimate KernelInceptionDistance(const float* x, int64_t n_x, const float* y, int64_t n_y, int64_t dim,
                                    const KidOptions& options = {});

}  // namespace gantry
