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
  float* mu = mean.data();
  float* sigma2 = var.data();
  // A replica without rows still joins both Sums, contributing zeros (mean/var start at 0).
  if (local_count > 0) ctx.backend->BatchNormStats(d.n, d.c, d.hw, x.data(), mu, sigma2);

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
  const Tensor sums = Tensor::Zeros(Shape{2 * c});
  float* sum_dy = sums.data();
  float* sum_dy_xhat = sums.data() + c;
  b.BatchNormBackward(d.n, d.c, d.hw, x, dy.data(), mean, var, eps_, gamma_.data(), nullptr, sum_dy_xhat,
                      sum_dy);
  // Local, not global, sums: the caller sums parameter gradients over the replicas.
  if (ctx.param_grads) {
    b.Axpy(c, 1.0f, sum_dy_xhat, dgamma_.data());
    b.Axpy(c, 1.0f, sum_dy, dbeta_.data());
  }
  if (!want_input_grad) return Tensor();

  ctx.sync_bn->Sum(sums.data(), 2 * c);
  // dx = gamma*invstd * (dy - sum(dy)/M - xhat * sum(dy*xhat)/M) over the global M, built
  // as BatchNormApply (which centres x before scaling) of the two mean terms, plus dy,
  // then scaled per channel.
  const double count = cache.saved[kGlobalCount].at(0);
  const Tensor coeffs = Tensor::Zeros(Shape{2 * c});  // [gamma*invstd | 0]
  for (int64_t ch = 0; ch < c; ++ch) {
    sum_dy[ch] = static_cast<float>(-sum_dy[ch] / count);
    sum_dy_xhat[ch] = static_cast<float>(-sum_dy_xhat[ch] / count);
    coeffs.data()[ch] = static_cast<float>(double{gamma_.at(ch)} / std::sqrt(double{var[ch]} + eps_));
  }
  Tensor dx = Tensor::Zeros(dy.shape());
  b.BatchNormApply(d.n, d.c, d.hw, x, mean, var, eps_, sum_dy_xhat, sum_dy, dx.data());
  b.Axpy(dx.numel(), 1.0f, dy.data(), dx.data());
  b.ChannelAffine(d.n, d.c, d.hw, dx.data(), coeffs.data(), coeffs.data() + c, dx.data());
  return dx;
}

}  // namespace gantry
