// Tensor: a shape and a dtype over a (shared, 64-byte aligned) storage buffer.
//
// Copies of a Tensor are views of the same storage (like PyTorch), so layers can hold
// views into one flat parameter buffer. Tensors are always contiguous row-major; a view
// is a contiguous range of the storage with its own shape. Storage lives on the host
// (Device::kCpu) or, in CUDA builds, on the process's current GPU (Device::kCuda; see
// worker/tensor/cuda/cuda_memory.h). A device tensor's data() is a device pointer, for
// the CUDA backend's kernels; the host reads it only through ToDevice(kCpu) or CopyFrom.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/check.h"
#include "common/bf16.h"
#include "worker/tensor/device.h"
#include "worker/tensor/dtype.h"
#include "worker/tensor/shape.h"

namespace gantry {

// True when this build has the CUDA backend (GANTRY_HAVE_CUDA); whether a GPU is
// visible is a run-time question (worker/tensor/cuda/cuda_device.h).
bool BuiltWithCuda();

// An owned, aligned byte buffer.
class Storage {
 public:
  // Zero-filled unless `zeroed` is false (then the contents are unspecified). kCuda
  // needs a CUDA build (CHECK) and a visible device (CHECK in the allocator).
  explicit Storage(size_t nbytes, bool zeroed = true, Device device = Device::kCpu);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* bytes() { return bytes_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  std::byte* bytes_;
  size_t nbytes_;
  Device device_;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: defined() is false

  // A new zero-filled tensor.
  static Tensor Zeros(Shape shape, DType dtype = DType::kF32, Device device = Device::kCpu);
  // A new tensor whose contents are unspecified: for outputs a kernel overwrites entirely
  // (skips Zeros' fill, a full pass over memory per activation).
  static Tensor Uninitialized(Shape shape, DType dtype = DType::kF32, Device device = Device::kCpu);
  // A new tensor holding a copy of `values` (size must equal shape.numel()).
  static Tensor FromVector(Shape shape, const std::vector<float>& values);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }

  float* data() const {
    CHECK(dtype_ == DType::kF32) << "data() on a " << DTypeName(dtype_) << " tensor";
    return reinterpret_cast<float*>(raw());
  }
  bf16* data_bf16() const {
    CHECK(dtype_ == DType::kBF16) << "data_bf16() on a " << DTypeName(dtype_) << " tensor";
    return reinterpret_cast<bf16*>(raw());
  }
  // The same values as raw bits, as the backends' bf16 kernels and the all-reduce wire take them.
  uint16_t* data_bf16_bits() const { return reinterpret_cast<uint16_t*>(data_bf16()); }
  // One value of a host tensor (a device tensor's first: On(Device::kCpu)).
  float at(int64_t flat_index) const {
    CHECK(device() == Device::kCpu) << "at() on a " << DeviceName(device()) << " tensor";
    return data()[flat_index];
  }

  // A view of the same elements with another shape of equal numel.
  Tensor Reshaped(Shape shape) const;
  // A view of the contiguous elements [offset, offset + shape.numel()).
  Tensor ViewAt(int64_t offset, Shape shape) const;
  // A view of rows [begin, end) along dimension 0.
  Tensor Slice(int64_t begin, int64_t end) const;

  // A new tensor with its own storage holding the same values (on the same device).
  Tensor Clone() const;
  // A new tensor on `device` holding the same values (a copy even when already there).
  Tensor ToDevice(Device device) const;
  // This tensor when it is on `device` already (a view, no copy), else ToDevice(device):
  // for reading a small device tensor on the host, or handing host values to a kernel.
  Tensor On(Device device) const { return this->device() == device ? *this : ToDevice(device); }
  // Same numel and dtype; either side may be on either device. A copy to the host has
  // finished when this returns; one to the device is ordered before later CUDA work.
  // Copying a tensor onto the same elements does nothing, so a value staged with On()
  // can be written back unconditionally.
  void CopyFrom(const Tensor& src) const;
  void Fill(float value) const;

  bool SharesStorageWith(const Tensor& other) const { return storage_ == other.storage_; }

 private:
  std::byte* raw() const { return storage_->bytes() + offset_ * static_cast<int64_t>(DTypeSize(dtype_)); }

  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // in elements
  Shape shape_;
  DType dtype_ = DType::kF32;
};

}  // namespace gantry
