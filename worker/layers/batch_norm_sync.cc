// Synchronised batch normalisation: the statistics and their gradients over the global
// batch, whose rows are spread across the data-parallel replicas (see batch_norm.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "worker/layers/batch_norm.h"

namespace gantry {

int64_t BatchNorm::SyncBatchStats(const Context& ctx, const Dims& d, const Tensor& x, const Tensor& mean,
                                  const Tensor& var) {
  const int64_t c = channels_;
  const double local_count = static_cast<double>(d.n * d.hw);
  // A replica without rows still joins both Sums, contributing zeros (mean/var start at 0).
  if (local_count > 0) ctx.backend->BatchNormStats(d.n, d.c, d.hw, x.data(), mean.data(), var.data());
  // The combination is per-channel arithmetic on the host (the reducer sums host memory);
  // on a GPU only these 2c values make the round trip.
  const Tensor host_mean = mean.On(Device::kCpu), host_var = var.On(Device::kCpu);
  float* mu = host_mean.data();
  float* sigma2 = host_var.data();

  // Round 1: per-channel sums and the count, so uneven shards weigh by their rows.
  std::vector<float> sums(static_cast<size_t>(c) + 1);
  for (int64_t ch = 0; ch < c; ++ch) sums[ch] = static_cast<float>(local_count * mu[ch]);
  sums[c] = static_cast<float>(local_count);
  ctx.sync_bn->Sum(sums.data(), c + 1);
  // Replicas that all hold rows (a shard plan's contract) make count >= 2 when the Sum
  // works. Less means a failed Sum handed back this replica's own sums, a failure the
  // caller reports after the step: normalise with them rather than abort or divide by 0.
  const double count = std::max(double{sums[c]}, 1.0);

  // Round 2: sum of squared deviations from the global mean. Each replica's share follows
  // exactly from its two-pass statistics, m * (var + (mean - global mean)^2), a sum of
  // non-negative terms: no E[x^2] - E[x]^2 cancellation and no second pass over x.
  std::vector<double> global_mean(static_cast<size_t>(c));
  std::vector<float> squares(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    global_mean[ch] = sums[ch] / count;
    const double shift = double{mu[ch]} - global_mean[ch];
    squares[ch] = static_cast<float>(local_count * (double{sigma2[ch]} + shift * shift));
  }
  ctx.sync_bn->Sum(squares.data(), c);

  for (int64_t ch = 0; ch < c; ++ch) {
    mu[ch] = static_cast<float>(global_mean[ch]);
    sigma2[ch] = static_cast<float>(std::max(0.0, squares[ch] / count));
  }
  mean.CopyFrom(host_mean);
  var.CopyFrom(host_var);
  return std::llround(count);
}

Tensor BatchNorm::BackwardSynced(const Context& ctx, const Dims& d, const Tensor& dy,
                                 const ActivationCache& cache, bool want_input_grad) {
  CHECK(ctx.sync_bn != nullptr) << "batch_norm: Forward synchronised its statistics, so Backward needs "
                                    "sync_bn";
  Backend& b = *ctx.backend;
  const int64_t c = channels_;
  const float* x = cache.saved[kInput].data();
  const float* mean = cache.saved[kMean].data();
  const float* var = cache.saved[kVar].data();

  // [sum dy | sum dy*xhat] per channel over this replica's rows, xhat from the global
  // statistics: the kernel's dbeta/dgamma outputs are exactly these sums.
  const Tensor sums = ctx.Zeros(Shape{2 * c});
  b.BatchNormBackward(d.n, d.c, d.hw, x, dy.data(), mean, var, eps_, gamma_.data(), nullptr, sums.data() + c,
                      sums.data());
  // Local, not global, sums: the caller sums parameter gradients over the replicas.
  if (ctx.param_grads) {
    b.Axpy(c, 1.0f, sums.data() + c, dgamma_.data());
    b.Axpy(c, 1.0f, sums.data(), dbeta_.data());
  }
  if (!want_input_grad) return Tensor();

  // The per-channel terms on the host (as in SyncBatchStats), then the pass over dy on
  // the backend's device.
  const Tensor host_sums = sums.On(Device::kCpu);
  ctx.sync_bn->Sum(host_sums.data(), 2 * c);
  // dx = gamma*invstd * (dy - sum(dy)/M - xhat * sum(dy*xhat)/M) over the global M, built
  // as BatchNormApply (which centres x before scaling) of the two mean terms, plus dy,
  // then scaled per channel.
  const double count = cache.saved[kGlobalCount].at(0);
  const Tensor host_var = cache.saved[kVar].On(Device::kCpu), host_gamma = gamma_.On(Device::kCpu);
  const Tensor host_coeffs = Tensor::Zeros(Shape{2 * c});  // [gamma*invstd | 0]
  float* sum_dy = host_sums.data();
  float* sum_dy_xhat = host_sums.data() + c;
  for (int64_t ch = 0; ch < c; ++ch) {
    sum_dy[ch] = static_cast<float>(-sum_dy[ch] / count);
    sum_dy_xhat[ch] = static_cast<float>(-sum_dy_xhat[ch] / count);
    host_coeffs.data()[ch] =
        static_cast<float>(double{host_gamma.at(ch)} / std::sqrt(double{host_var.at(ch)} + eps_));
  }
  const Tensor terms = host_sums.On(ctx.device()), coeffs = host_coeffs.On(ctx.device());
  Tensor dx = ctx.Zeros(dy.shape());
  b.BatchNormApply(d.n, d.c, d.hw, x, mean, var, eps_, terms.data() + c, terms.data(), dx.data());
  b.Axpy(dx.numel(), 1.0f, dy.data(), dx.data());
  b.ChannelAffine(d.n, d.c, d.hw, dx.data(), coeffs.data(), coeffs.data() + c, dx.data());
  return dx;
}

}  // namespace gantry
