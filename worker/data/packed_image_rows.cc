#include "worker/data/packed_image_rows.h"

#include <algorithm>

#include "common/check.h"

namespace gantry {

PackedImageRows::PackedImageRows(std::shared_ptr<const PackedImages> set, int64_t limit, bool mirror)
    : set_(std::move(set)),
      base_count_(limit > 0 ? std::min(limit, set_->info().count) : set_->info().count),
      mirror_(mirror) {}

Shape PackedImageRows::sample_shape() const {
  const PackedImagesInfo& info = set_->info();
  return Shape{info.channels, info.image_size, info.image_size};
}

void PackedImageRows::CopySample(int64_t index, float* out) const {
  CHECK(index >= 0 && index < count()) << "row " << index << " of " << count();
  const bool flip = index >= base_count_;
  const uint8_t* bytes = set_->record(index % base_count_);
  const int64_t side = set_->info().image_size;
  const int64_t lines = set_->info().channels * side;  // every channel's rows, one after another
  for (int64_t line = 0; line < lines; ++line) {
    const uint8_t* in = bytes + line * side;
    float* row = out + line * side;
    if (flip) {
      for (int64_t x = 0; x < side; ++x) row[x] = static_cast<float>(in[side - 1 - x]) / 127.5f - 1.0f;
    } else {
      for (int64_t x = 0; x < side; ++x) row[x] = static_cast<float>(in[x]) / 127.5f - 1.0f;
    }
  }
}

}  // namespace gantry
