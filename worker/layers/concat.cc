#include "worker/layers/concat.h"

namespace gantry {
namespace {

// Elements of one channel (the product of dimensions 2 and up).
int64_t ChannelSize(const Shape& s) {
  int64_t size = 1;
  for (int i = 2; i < s.rank(); ++i) size *= s[i];
  return size;
}

Shape WithChannels(const Shape& s, int64_t channels) {
  std::vector<int64_t> dims = s.dims();
  dims[1] = channels;
  return Shape(std::move(dims));
}

}  // namespace

Tensor ConcatChannels::Forward(const Context& ctx, const Tensor& a, const Tensor& b) const {
  CHECK_GE(a.rank(), 2) << "concat input " << a.shape().ToString();
  CHECK(WithChannels(a.shape(), 0) == WithChannels(b.shape(), 0))
      << "concat of " << a.shape().ToString() << " and " << b.shape().ToString();
  const int64_t n = a.dim(0);
  const int64_t sa = a.dim(1) * ChannelSize(a.shape());  // per-sample sizes
  const int64_t sb = b.dim(1) * ChannelSize(b.shape());
  Tensor y = ctx.Uninitialized(WithChannels(a.shape(), a.dim(1) + b.dim(1)));  // every element copied below
  for (int64_t i = 0; i < n; ++i) {
    float* yi = y.data() + i * (sa + sb);
    ctx.backend->Copy(sa, a.data() + i * sa, yi);
    ctx.backend->Copy(sb, b.data() + i * sb, yi + sa);
  }
  return y;
}

std::pair<Tensor, Tensor> ConcatChannels::Backward(const Context& ctx, const Tensor& dy,
                                                   int64_t channels_a) const {
  CHECK_GE(dy.rank(), 2) << "concat gradient " << dy.shape().ToString();
  CHECK(0 <= channels_a && channels_a <= dy.dim(1))
      << "split at " << channels_a << " of " << dy.shape().ToString();
  const int64_t n = dy.dim(0);
  const int64_t sa = channels_a * ChannelSize(dy.shape());
  const int64_t sb = (dy.dim(1) - channels_a) * ChannelSize(dy.shape());
  Tensor da = ctx.Uninitialized(WithChannels(dy.shape(), channels_a));  // both filled below
  Tensor db = ctx.Uninitialized(WithChannels(dy.shape(), dy.dim(1) - channels_a));
  for (int64_t i = 0; i < n; ++i) {
    const float* dyi = dy.data() + i * (sa + sb);
    ctx.backend->Copy(sa, dyi, da.data() + i * sa);
    ctx.backend->Copy(sb, dyi + sa, db.data() + i * sb);
  }
  return {da, db};
}

}  // namespace gantry
