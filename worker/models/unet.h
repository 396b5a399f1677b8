// The Pix2Pix U-Net generator as ONE Layer: [N, in, S, S] -> [N, out, S, S] (tanh).
//
// A U-Net is not a chain (every up block's output is concatenated with the mirrored
// down block's output), but the model seam holds networks as a Sequential. This class
// keeps the branching inside a composite Layer that honours the Layer contract, so the
// generator is a Sequential of this one layer and everything downstream (flat
// parameters, the all-reduce, optimizers, checkpoints, sync-BN, sample writing) works
// unchanged:
//   - ParamSpecs/BufferSpecs list the inner layers' tensors in forward order (down
//     blocks, up blocks, output block), named "<block>.<index>.<layer>.<tensor>";
//     BindParams/BindBuffers hand each inner layer its views of the flat buffers.
//   - Forward keeps one child ActivationCache per inner layer (cache->children), so
//     several Forwards may precede their Backwards, as for any layer.
//   - The Context is passed to every inner layer (sync_bn reaches the BatchNorms,
//     param_grads and precision apply), with a distinct dropout seed per inner layer.
// The blocks are described in worker/models/pix2pix.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runspec/model_config.h"
#include "worker/layers/concat.h"
#include "worker/layers/layer.h"

namespace gantry {

class UNet final : public Layer {
 public:
  // `config.image_size` must pass Pix2pixImageSizeProblem (CHECKed).
  UNet(const Pix2pixConfig& config, int64_t in_channels, int64_t out_channels);

  std::string name() const override { return "unet"; }
  Shape OutputShape(const Shape& input) const override;
  std::vector<ParamSpec> ParamSpecs() const override;
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;
  std::vector<ParamSpec> BufferSpecs() const override;
  void BindBuffers(std::span<const Tensor> buffers) override;

  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

  int64_t depth() const { return static_cast<int64_t>(down_.size()); }
  // Channels out of down block i (its skip); up block j outputs down_channels(depth-2-j).
  int64_t down_channels(int64_t i) const { return down_channels_[static_cast<size_t>(i)]; }
  // The inner layers of down block i / up block j / the output block, for tests.
  std::vector<Layer*> DownBlock(int64_t i) const;
  std::vector<Layer*> UpBlock(int64_t j) const;

 private:
  using Block = std::vector<std::unique_ptr<Layer>>;

  // Every block in forward order: down_, up_, then out_; `cache_index` of a block is its
  // position in this order (its child cache).
  std::vector<const Block*> AllBlocks() const;
  Tensor ForwardBlock(const Context& ctx, const Block& block, size_t block_index, const Tensor& x,
                      ActivationCache* cache) const;
  Tensor BackwardBlock(const Context& ctx, const Block& block, const Tensor& dy, const ActivationCache& cache,
                       bool want_input_grad) const;

  int64_t in_channels_, out_channels_, image_size_;
  std::vector<int64_t> down_channels_;
  std::vector<Block> down_, up_;
  Block out_;
  ConcatChannels concat_;
};

// U-Net depth for an image side: log2(size) down blocks (1x1 at the bottleneck), at
// most Pix2pixConfig::kMaxDepth.
int64_t UNetDepth(int64_t image_size);

}  // namespace gantry
