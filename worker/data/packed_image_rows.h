// The training rows of a packed image set (packed_images.h) as SampleRows: each record's
// bytes converted to floats in [-1, 1] (p / 127.5 - 1, as the MNIST-format sets) when the
// loader asks for it, so a rank reads only the records of its own rows and holds no copy
// of the set (the mapped pages are the page cache's, shared by the ranks of a host).
//
// `limit` keeps the first records only (--limit-images; 0: all). With `mirror` the set
// is twice as large: rows [count, 2 count) are rows [0, count) flipped left to right
// (--mirror), so an epoch's permutation mixes originals and flips like any other rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "worker/data/packed_images.h"
#include "worker/data/sample_rows.h"

namespace gantry {

class PackedImageRows final : public SampleRows {
 public:
  PackedImageRows(std::shared_ptr<const PackedImages> set, int64_t limit, bool mirror);

  int64_t count() const override { return base_count_ * (mirror_ ? 2 : 1); }
  Shape sample_shape() const override;
  void CopySample(int64_t index, float* out) const override;
  std::string origin() const override { return set_->path(); }

  const PackedImages& set() const { return *set_; }
  // The class of row `index` (a flipped row has its original's); -1 when unlabelled.
  int label(int64_t index) const { return set_->label(index % base_count_); }

 private:
  std::shared_ptr<const PackedImages> set_;
  int64_t base_count_;
  bool mirror_;
};

}  // namespace gantry
