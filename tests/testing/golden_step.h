// Shared pieces of the whole-step goldens (tests/golden/dcgan_step, pix2pix_step*):
// the parameter layout and subsample files, the integer-hash parameter recipe of
// scripts/make_goldens.py (recipe_params), and the per-tensor gradient comparison.
// Header-only because the golden files are found through GANTRY_SOURCE_DIR, which only
// the test binaries define (see golden.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

#ifdef GANTRY_SOURCE_DIR
namespace gantry::testing {

// One row per parameter tensor, in torch's parameters() order: where it starts in the
// flat buffer, its size, and whether it is a BatchNorm gamma (recipe base 1, else 0).
struct GoldenLayout {
  std::vector<int64_t> offset, numel;
  std::vector<bool> gamma;
  int64_t total() const { return offset.empty() ? 0 : offset.back() + numel.back(); }
};

inline GoldenLayout LoadGoldenLayout(const std::string& case_name, const std::string& file) {
  const Tensor t = LoadGolden(case_name, file);
  CHECK(t.rank() == 2 && t.dim(1) == 3) << file << " must be [tensors, 3]";
  GoldenLayout l;
  for (int64_t k = 0; k < t.dim(0); ++k) {
    l.offset.push_back(static_cast<int64_t>(t.at(3 * k)));
    l.numel.push_back(static_cast<int64_t>(t.at(3 * k + 1)));
    l.gamma.push_back(t.at(3 * k + 2) != 0.0f);
  }
  return l;
}

// Sorted flat indices, stored as exact integers in floating point.
inline std::vector<int64_t> LoadGoldenIndices(const std::string& case_name, const std::string& file) {
  const Tensor t = LoadGolden(case_name, file);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.at(i);
    CHECK(v >= 0 && v == std::floor(v) && v < 16777216.0f) << file << "[" << i << "] = " << v;
    idx.push_back(static_cast<int64_t>(v));
    CHECK(i == 0 || idx[i] > idx[i - 1]) << file << " is not sorted";
  }
  return idx;
}

// The script's recipe_params(): p[i] = base + v/16 with v = ((h >> 40) - 2^23) / 2^23,
// h = SplitMix64(seed * 2^32 + i), computed in double and rounded once to float.
inline float RecipeValue(uint64_t seed, int64_t i, bool gamma) {
  const uint64_t h = Mix64((seed << 32) + static_cast<uint64_t>(i));
  const double v = static_cast<double>(static_cast<int64_t>(h >> 40) - (int64_t{1} << 23)) / 8388608.0;
  return static_cast<float>((gamma ? 1.0 : 0.0) + v / 16.0);
}

inline void FillRecipe(const Tensor& flat, const GoldenLayout& layout, uint64_t seed) {
  CHECK_EQ(flat.numel(), layout.total());
  for (size_t k = 0; k < layout.offset.size(); ++k) {
    for (int64_t i = layout.offset[k]; i < layout.offset[k] + layout.numel[k]; ++i) {
      flat.data()[i] = RecipeValue(seed, i, layout.gamma[k]);
    }
  }
}

// The parameter tensor (row of `layout`) that flat index i belongs to.
inline size_t TensorOf(const GoldenLayout& layout, int64_t i) {
  size_t k = 0;
  while (k + 1 < layout.offset.size() && layout.offset[k + 1] <= i) ++k;
  return k;
}

inline Tensor Gather(const Tensor& flat, const std::vector<int64_t>& idx) {
  Tensor out = Tensor::Zeros(Shape{static_cast<int64_t>(idx.size())});
  for (size_t j = 0; j < idx.size(); ++j) out.data()[j] = flat.at(idx[j]);
  return out;
}

// Adds a failure unless the C++ flat layout is torch's: same tensors, offsets, sizes.
inline void ExpectLayoutMatches(const FlatParameters& params, const GoldenLayout& layout, const std::string& net) {
  ASSERT_EQ(params.param_entries().size(), layout.offset.size()) << net << ": number of parameter tensors";
  for (size_t k = 0; k < layout.offset.size(); ++k) {
    const FlatParameters::Entry& e = params.param_entries()[k];
    EXPECT_EQ(e.offset, layout.offset[k]) << net << " tensor " << k << " (" << e.name << ") offset";
    EXPECT_EQ(e.spec.shape.numel(), layout.numel[k]) << net << " tensor " << k << " (" << e.name << ") size";
  }
  EXPECT_EQ(params.num_params(), layout.total()) << net;
}

// Compares the gathered gradients tensor by tensor (the tolerance scales with each
// tensor's own magnitude; small BatchNorm gradients sit next to large conv ones):
// |a - e| <= grad_rel * (max |e| over the tensor's sampled elements + |e|). Returns the
// per-element allowance used.
inline std::vector<double> ExpectGradsClose(const Tensor& actual, const Tensor& expected,
                                            const std::vector<int64_t>& idx, const GoldenLayout& layout,
                                            const FlatParameters& params, double grad_rel, const std::string& net) {
  std::vector<double> allowance(idx.size(), 0.0);
  size_t j0 = 0;
  while (j0 < idx.size()) {
    const size_t k = TensorOf(layout, idx[j0]);
    size_t j1 = j0;
    while (j1 < idx.size() && TensorOf(layout, idx[j1]) == k) ++j1;
    const Shape s{static_cast<int64_t>(j1 - j0)};
    const Tensor want = expected.ViewAt(static_cast<int64_t>(j0), s);
    const double atol = grad_rel * MaxAbs(want);
    const std::string name = k < params.param_entries().size() ? params.param_entries()[k].name : "?";
    ExpectAllClose(actual.ViewAt(static_cast<int64_t>(j0), s), want, atol, grad_rel,
                   net + " gradient of tensor " + std::to_string(k) + " (" + name + ")");
    for (size_t j = j0; j < j1; ++j) allowance[j] = atol + grad_rel * std::fabs(expected.at(static_cast<int64_t>(j)));
    j0 = j1;
  }
  return allowance;
}

}  // namespace gantry::testing
#endif  // GANTRY_SOURCE_DIR
