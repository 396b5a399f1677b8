// Which images of a set the label-free quality score compares a run's samples with: up
// to kImageReferenceCount of them, the first of a permutation drawn from a fixed seed
// (so every run on the set, and every rank count, compares with the same images). The
// images right after them in that order are held out from the reference: what a check of
// the score (gantry-bench-quality --pack) scores as real images the reference lacks.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

inline constexpr int64_t kImageReferenceCount = 1024;

// A permutation of 0..count-1; its first min(count, kImageReferenceCount) rows are the
// reference. count > 0.
std::vector<int64_t> ImageReferenceOrder(int64_t count);

}  // namespace gantry
