#include "worker/train/device_feed.h"

#include "common/check.h"
#if GANTRY_HAVE_CUDA
#include "worker/tensor/cuda/batch_uploader.h"
#endif

namespace gantry {

#if !GANTRY_HAVE_CUDA
// Never constructed without CUDA; complete so that the unique_ptr's deleter compiles.
namespace cuda {
class BatchUploader {};
}  // namespace cuda
#endif

DeviceFeed::DeviceFeed(PrefetchLoader& loader, Device device) : loader_(loader) {
  if (device == Device::kCpu) return;
#if GANTRY_HAVE_CUDA
  uploader_ = std::make_unique<cuda::BatchUploader>();
#else
  CHECK(false) << "a GPU data feed in a build without CUDA";
#endif
}

DeviceFeed::~DeviceFeed() = default;

std::optional<Tensor> DeviceFeed::Next() {
  if (uploader_ == nullptr) return loader_.Next();
#if GANTRY_HAVE_CUDA
  if (uploader_->pending() == 0) {  // the first batch, or the epoch is over
    std::optional<Tensor> first = loader_.Next();
    if (!first.has_value()) return std::nullopt;
    uploader_->Start(*first);
  }
  Tensor ready = uploader_->TakeReady();
  // The next batch's upload starts now and runs while the GPU works on this one.
  if (std::optional<Tensor> following = loader_.Next()) uploader_->Start(*following);
  return ready;
#else
  return std::nullopt;
#endif
}

}  // namespace gantry
