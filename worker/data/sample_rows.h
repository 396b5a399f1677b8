// Where the training loader takes its rows from: `count()` samples of one shape, each
// written as floats in [-1, 1] into the batch being assembled. Two kinds: a data set
// held in memory (InMemoryRows over an ImageDataset: MNIST-format files, flow rows) and
// the records of a packed image set read from its mapped file and converted as they are
// needed (packed_image_rows.h), so each rank touches only the rows of its shards.
#pragma once

#include <cstdint>
#include <string>

#include "worker/data/mnist_dataset.h"
#include "worker/tensor/shape.h"

namespace gantry {

class SampleRows {
 public:
  virtual ~SampleRows() = default;

  virtual int64_t count() const = 0;
  // One sample's shape, {channels, height, width}.
  virtual Shape sample_shape() const = 0;
  // Writes sample `index` (0 <= index < count()) as sample_shape().numel() floats to
  // `out`. Safe to call from several threads at once.
  virtual void CopySample(int64_t index, float* out) const = 0;
  // Where the samples come from, for messages ("the images in DIR", a file's path).
  virtual std::string origin() const = 0;
};

// An ImageDataset as SampleRows; `data` must outlive it.
class InMemoryRows final : public SampleRows {
 public:
  explicit InMemoryRows(const ImageDataset& data) : data_(data) {}
  int64_t count() const override { return data_.count; }
  Shape sample_shape() const override { return Shape{data_.channels, data_.height, data_.width}; }
  void CopySample(int64_t index, float* out) const override;
  std::string origin() const override { return data_.images_path; }
  const ImageDataset& data() const { return data_; }

 private:
  const ImageDataset& data_;
};

}  // namespace gantry
