#include "worker/models/unet.h"

#include <algorithm>

#include "worker/layers/activation.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/dropout.h"
#include "worker/models/pix2pix_blocks.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr int64_t kKernel = 4, kStride = 2, kPadding = 1;
constexpr int64_t kMaxChannelFactor = 8;  // 64-128-256-512-512...: ngf times at most 8
constexpr int64_t kDropoutBlocks = 3;     // the first three up blocks (TF tutorial)

void Append(std::vector<std::unique_ptr<Layer>>& block, std::vector<std::unique_ptr<Layer>> more) {
  for (auto& l : more) block.push_back(std::move(l));
}

}  // namespace

int64_t UNetDepth(int64_t image_size) {
  int64_t depth = 0;
  while ((int64_t{1} << (depth + 1)) <= image_size) ++depth;
  return std::min(depth, Pix2pixConfig::kMaxDepth);
}

UNet::UNet(const Pix2pixConfig& c, int64_t in_channels, int64_t out_channels)
    : in_channels_(in_channels), out_channels_(out_channels), image_size_(c.image_size) {
  CHECK(Pix2pixImageSizeProblem(c.image_size).empty()) << "unet: image size " << c.image_size;
  CHECK(c.ngf > 0 && in_channels > 0 && out_channels > 0);
  const int64_t n = UNetDepth(c.image_size);
  for (int64_t i = 0; i < n; ++i) down_channels_.push_back(c.ngf * std::min(int64_t{1} << i, kMaxChannelFactor));

  // Down block i: Conv 4x4 s2 (no bias) -> norm -> LeakyReLU. The first block has no
  // norm (every source agrees) and neither has the innermost (the bottleneck; see
  // pix2pix.h): both are the convolution with the LeakyReLU fused into it.
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = i == 0 ? in_channels : down_channels_[i - 1], out = down_channels_[i];
    Block block;
    const bool normed = i > 0 && i < n - 1;
    block.push_back(std::make_unique<Conv2d>(in, out, kKernel, kStride, kPadding, /*bias=*/false,
                                             normed ? std::nullopt : std::optional(LeakyRelu(c))));
    if (normed) Append(block, NormThenActivation(c, out, LeakyRelu(c)));
    down_.push_back(std::move(block));
  }
  // Up block j: ConvT 4x4 s2 (no bias) -> norm -> ReLU -> Dropout in the first three.
  // ReLU before Dropout equals the tutorial's Dropout before ReLU (ReLU(m x / (1 - p)) =
  // m ReLU(x) / (1 - p) for a mask m of 0s and 1s), and lets the ReLU fuse into the norm.
  for (int64_t j = 0; j + 1 < n; ++j) {
    const int64_t in = j == 0 ? down_channels_[n - 1] : 2 * down_channels_[n - 1 - j];
    const int64_t out = down_channels_[n - 2 - j];
    Block block;
    block.push_back(std::make_unique<ConvTranspose2d>(in, out, kKernel, kStride, kPadding, 0, /*bias=*/false));
    Append(block, NormThenActivation(c, out, Relu()));
    if (j < kDropoutBlocks && c.dropout > 0.0f) block.push_back(std::make_unique<Dropout>(c.dropout));
    up_.push_back(std::move(block));
  }
  // Output: ConvT 4x4 s2 (with bias) of the last concatenation -> tanh.
  out_.push_back(std::make_unique<ConvTranspose2d>(n == 1 ? down_channels_[0] : 2 * down_channels_[0],
                                                   out_channels, kKernel, kStride, kPadding, 0, /*bias=*/true));
  out_.push_back(MakeTanh());
}

Shape UNet::OutputShape(const Shape& input) const {
  CHECK(input.rank() == 4 && input[1] == in_channels_ && input[2] == image_size_ && input[3] == image_size_)
      << "unet: input " << input.ToString() << ", expected [N, " << in_channels_ << ", " << image_size_ << ", "
      << image_size_ << "]";
  return Shape{input[0], out_channels_, image_size_, image_size_};
}

std::vector<const UNet::Block*> UNet::AllBlocks() const {
  std::vector<const Block*> blocks;
  for (const Block& b : down_) blocks.push_back(&b);
  for (const Block& b : up_) blocks.push_back(&b);
  blocks.push_back(&out_);
  return blocks;
}

std::vector<ParamSpec> UNet::ParamSpecs() const {
  std::vector<ParamSpec> specs;
  const std::vector<const Block*> blocks = AllBlocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::string block = b < down_.size()                ? "down" + std::to_string(b)
                              : b < down_.size() + up_.size() ? "up" + std::to_string(b - down_.size())
                                                              : std::string("out");
    for (size_t k = 0; k < blocks[b]->size(); ++k) {
      const Layer& layer = *(*blocks[b])[k];
      for (ParamSpec s : layer.ParamSpecs()) {
        s.name = block + "." + std::to_string(k) + "." + layer.name() + "." + s.name;
        specs.push_back(std::move(s));
      }
    }
  }
  return specs;
}

void UNet::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  CHECK_EQ(params.size(), grads.size());
  size_t next = 0;
  for (const Block* block : AllBlocks()) {
    for (const auto& layer : *block) {
      const size_t count = layer->ParamSpecs().size();
      CHECK_LE(next + count, params.size()) << "unet: too few parameter views";
      layer->BindParams(params.subspan(next, count), grads.subspan(next, count));
      next += count;
    }
  }
  CHECK_EQ(next, params.size()) << "unet: too many parameter views";
}

std::vector<ParamSpec> UNet::BufferSpecs() const {
  std::vector<ParamSpec> specs;
  for (const Block* block : AllBlocks()) {
    for (const auto& layer : *block) {
      for (ParamSpec s : layer->BufferSpecs()) specs.push_back(std::move(s));
    }
  }
  return specs;
}

void UNet::BindBuffers(std::span<const Tensor> buffers) {
  size_t next = 0;
  for (const Block* block : AllBlocks()) {
    for (const auto& layer : *block) {
      const size_t count = layer->BufferSpecs().size();
      CHECK_LE(next + count, buffers.size()) << "unet: too few buffer views";
      layer->BindBuffers(buffers.subspan(next, count));
      next += count;
    }
  }
  CHECK_EQ(next, buffers.size()) << "unet: too many buffer views";
}

std::vector<Layer*> UNet::DownBlock(int64_t i) const {
  std::vector<Layer*> out;
  for (const auto& l : down_.at(static_cast<size_t>(i))) out.push_back(l.get());
  return out;
}

std::vector<Layer*> UNet::UpBlock(int64_t j) const {
  std::vector<Layer*> out;
  for (const auto& l : up_.at(static_cast<size_t>(j))) out.push_back(l.get());
  return out;
}

Tensor UNet::ForwardBlock(const Context& ctx, const Block& block, size_t block_index, const Tensor& x,
                          ActivationCache* cache) const {
  cache->saved.clear();
  cache->children.resize(block.size());
  Tensor h = x;
  for (size_t k = 0; k < block.size(); ++k) {
    Context layer_ctx = ctx;
    // A stream per inner layer, as Sequential gives each of its layers.
    layer_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ ((block_index << 16) + k + 1));
    h = block[k]->Forward(layer_ctx, h, &cache->children[k]);
  }
  return h;
}

Tensor UNet::BackwardBlock(const Context& ctx, const Block& block, const Tensor& dy, const ActivationCache& cache,
                           bool want_input_grad) const {
  CHECK_EQ(cache.children.size(), block.size()) << "unet: cache is not from this block's Forward";
  Tensor g = dy;
  for (size_t k = block.size(); k-- > 0;) g = block[k]->Backward(ctx, g, cache.children[k], want_input_grad || k > 0);
  return want_input_grad ? g : Tensor();
}

Tensor UNet::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  OutputShape(x.shape());
  const size_t n = down_.size();
  cache->saved.clear();
  cache->children.resize(n + up_.size() + 1);
  std::vector<Tensor> skips(n);
  Tensor h = x;
  for (size_t i = 0; i < n; ++i) skips[i] = h = ForwardBlock(ctx, down_[i], i, h, &cache->children[i]);
  for (size_t j = 0; j < up_.size(); ++j) {
    const Tensor u = ForwardBlock(ctx, up_[j], n + j, h, &cache->children[n + j]);
    h = concat_.Forward(ctx, u, skips[n - 2 - j]);  // [up output, skip], as the tutorial
  }
  return ForwardBlock(ctx, out_, n + up_.size(), h, &cache->children.back());
}

Tensor UNet::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache, bool want_input_grad) {
  const size_t n = down_.size();
  CHECK_EQ(cache.children.size(), n + up_.size() + 1) << "unet: cache is not from this layer's Forward";
  Tensor g = BackwardBlock(ctx, out_, dy, cache.children.back(), /*want_input_grad=*/true);
  // Up blocks in reverse: split each concatenation's gradient into the up block's part
  // and the skip's part, which joins its down block's output gradient below.
  std::vector<Tensor> skip_grads(n);
  for (size_t j = up_.size(); j-- > 0;) {
    auto [d_up, d_skip] = concat_.Backward(ctx, g, down_channels_[n - 2 - j]);
    skip_grads[n - 2 - j] = d_skip;
    g = BackwardBlock(ctx, up_[j], d_up, cache.children[n + j], /*want_input_grad=*/true);
  }
  for (size_t i = n; i-- > 0;) {
    if (skip_grads[i].defined()) {
      // The skip's gradient is a fresh tensor of ours (a layer may hand back a view of
      // its dy), so the sum goes there.
      ctx.backend->Axpy(g.numel(), 1.0f, g.data(), skip_grads[i].data());
      g = skip_grads[i];
    }
    g = BackwardBlock(ctx, down_[i], g, cache.children[i], want_input_grad || i > 0);
  }
  return want_input_grad ? g : Tensor();
}

}  // namespace gantry
