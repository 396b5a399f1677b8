// Channel concatenation: [N, Ca, H, W] + [N, Cb, H, W] -> [N, Ca + Cb, H, W] (U-Net skips).
#pragma once

#include <utility>

#include "worker/layers/layer.h"

namespace gantry {

// Not a Layer: it has two inputs. Stateless, so Backward needs only the split point.
// Any rank >= 2 works; dimensions other than 1 must agree.
class ConcatChannels {
 public:
  Tensor Forward(const Context& ctx, const Tensor& a, const Tensor& b) const;
  // Splits dy along dimension 1 into (da, db) with `channels_a` channels in da.
  std::pair<Tensor, Tensor> Backward(const Context& ctx, const Tensor& dy, int64_t channels_a) const;
};

}  // namespace gantry
