#include "worker/tensor/tensor.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "worker/tensor/host_block_cache.h"

#if GANTRY_HAVE_CUDA
#include "worker/tensor/cuda/cuda_memory.h"
#endif

namespace gantry {
namespace {
constexpr size_t kAlignment = HostBlockCache::kAlignment;  // one cache line, and an AVX-512 vector

// The host allocation for a storage of `nbytes`: whole cache lines, at least one.
size_t HostBytes(size_t nbytes) {
  return std::max<size_t>(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
}

// A training step allocates and frees the same activation-sized buffers (up to ~26 MB at
// batch 512) every step. glibc serves blocks above its mmap threshold with fresh mappings
// and trims freed heap tops back to the OS, so each step page-faulted them in again
// (about 10% of a oneDNN step at batch 256). Keep such blocks in the heap instead: the
// threshold at glibc's maximum (32 MB on 64-bit) and trimming only past 1 GB free. This
// is process-wide; it changes where memory comes from, never what a program computes.
// Blocks past that maximum go through HostBlockCache, for the same reason.
bool KeepActivationBuffersInTheHeap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}

#if GANTRY_HAVE_CUDA
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif

}  // namespace

bool BuiltWithCuda() { return kBuiltWithCuda; }

Storage::Storage(size_t nbytes, bool zeroed, Device device) : nbytes_(nbytes), device_(device) {
  if (device == Device::kCuda) {
#if GANTRY_HAVE_CUDA
    bytes_ = cuda::Allocate(nbytes);
    if (zeroed) cuda::Zero(bytes_, nbytes);
    return;
#else
    CHECK(false) << "a CUDA tensor in a build without CUDA (configure with -DGANTRY_CUDA=ON)";
#endif
  }
  static const bool heap_tuned = KeepActivationBuffersInTheHeap();
  (void)heap_tuned;
  bytes_ = static_cast<std::byte*>(HostBlockCache::Instance().Allocate(HostBytes(nbytes)));
  if (bytes_ == nullptr) throw std::bad_alloc();
  if (zeroed) std::memset(bytes_, 0, HostBytes(nbytes));
}

Storage::~Storage() {
#if GANTRY_HAVE_CUDA
  if (device_ == Device::kCuda) {
    cuda::Release(bytes_, nbytes_);
    return;
  }
#endif
  HostBlockCache::Instance().Release(bytes_, HostBytes(nbytes_));
}

Tensor Tensor::Zeros(Shape shape, DType dtype, Device device) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(t.shape_.numel()) * DTypeSize(dtype), true, device);
  return t;
}

Tensor Tensor::Uninitialized(Shape shape, DType dtype, Device device) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(t.shape_.numel()) * DTypeSize(dtype), false, device);
  return t;
}

Tensor Tensor::FromVector(Shape shape, const std::vector<float>& values) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.numel()) << "for shape " << shape.ToString();
  Tensor t = Zeros(std::move(shape));
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::Reshaped(Shape shape) const {
  CHECK_EQ(shape.numel(), numel()) << "cannot reshape " << shape_.ToString() << " to " << shape.ToString();
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::ViewAt(int64_t offset, Shape shape) const {
  CHECK(defined());
  CHECK_GE(offset, 0);
  CHECK_LE(offset + shape.numel(), numel()) << "view " << shape.ToString() << " at " << offset
                                            << " outside " << shape_.ToString();
  Tensor t = *this;
  t.offset_ = offset_ + offset;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  CHECK_GE(rank(), 1);
  CHECK(0 <= begin && begin <= end && end <= dim(0)) << "slice [" << begin << "," << end << ") of " << shape_.ToString();
  std::vector<int64_t> dims = shape_.dims();
  const int64_t row = dims[0] == 0 ? 0 : numel() / dims[0];
  dims[0] = end - begin;
  return ViewAt(begin * row, Shape(std::move(dims)));
}

Tensor Tensor::Clone() const { return ToDevice(device()); }

Tensor Tensor::ToDevice(Device device) const {
  Tensor t = Uninitialized(shape_, dtype_, device);
  t.CopyFrom(*this);
  return t;
}

void Tensor::CopyFrom(const Tensor& src) const {
  CHECK_EQ(src.numel(), numel());
  CHECK(src.dtype() == dtype_);
  if (storage_ == src.storage_ && offset_ == src.offset_) return;
  const bool dst_on_device = device() == Device::kCuda, src_on_device = src.device() == Device::kCuda;
  if (!dst_on_device && !src_on_device) {
    std::memmove(raw(), src.raw(), nbytes());
    return;
  }
#if GANTRY_HAVE_CUDA
  cuda::Copy(raw(), dst_on_device, src.raw(), src_on_device, nbytes());
#endif
}

void Tensor::Fill(float value) const {
  if (device() == Device::kCuda) {
#if GANTRY_HAVE_CUDA
    // Zeroing is every step's (the gradient buffers): a memset on the stream.
    if (value == 0.0f) {
      cuda::Zero(raw(), nbytes());
      return;
    }
#endif
    // Other values are rare (initialisation, tests): fill on the host and copy over.
    Tensor host = Uninitialized(shape_, dtype_);
    host.Fill(value);
    CopyFrom(host);
    return;
  }
  if (dtype_ == DType::kF32) {
    std::fill_n(data(), numel(), value);
  } else {
    std::fill_n(data_bf16(), numel(), bf16::FromFloat(value));
  }
}

}  // namespace gantry
