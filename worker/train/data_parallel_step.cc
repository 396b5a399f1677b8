#include "worker/train/data_parallel_step.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "common/status_macros.h"
#include "worker/comm/bf16_wire.h"
#include "worker/train/gradient_unscale.h"

namespace gantry {

DataParallelStep::DataParallelStep(Dcgan& model, Optimizer& g_opt, Optimizer& d_opt, Communicator& comm,
                                   Backend& backend, const CommOptions& comm_options, bool sync_bn,
                                   const Clock& clock, DebugSlowdown slowdown, const MixedPrecision& mixed)
    : model_(model),
      g_opt_(g_opt),
      d_opt_(d_opt),
      comm_(comm),
      backend_(backend),
      comm_options_(comm_options),
      reducer_(comm, comm_options),
      sync_bn_(sync_bn),
      clock_(clock),
      slowdown_(slowdown),
      mixed_(mixed),
      g_scaler_(mixed.loss_scale),
      d_scaler_(mixed.loss_scale) {
  if (mixed_.allreduce_dtype == WireDtype::kBf16 && comm_.size() > 1) {
    wire_.resize(static_cast<size_t>(std::max(model_.g_params().num_params(), model_.d_params().num_params())));
  }
}

absl::Status DataParallelStep::Restore(const LossScalerState& g, const LossScalerState& d, int64_t steps_run) {
  if (steps_run < 0) return absl::InvalidArgumentError("a negative step count cannot be resumed");
  LossScaler g_scaler = g_scaler_, d_scaler = d_scaler_;
  RETURN_IF_ERROR(g_scaler.Restore(g));
  RETURN_IF_ERROR(d_scaler.Restore(d));
  g_scaler_ = g_scaler;
  d_scaler_ = d_scaler;
  steps_run_ = steps_run;
  return absl::OkStatus();
}

absl::StatusOr<bool> DataParallelStep::ExchangeGradients(FlatParameters& params, const LossScaler& scaler,
                                                         double* seconds) {
  float* grads = params.grads().data();
  const int64_t n = params.grads().numel();
  const float inv_scale = 1.0f / scaler.scale();
  const double t0 = clock_.NowSeconds();
  bool finite = true;
  if (comm_.size() > 1 && mixed_.allreduce_dtype == WireDtype::kBf16) {
    ToWireBf16(grads, wire_.data(), n);
    RETURN_IF_ERROR(comm_.AllReduceSumBf16(wire_.data(), n, comm_options_));
    finite = UnscaleFromBf16AndCheckFinite(wire_.data(), grads, n, inv_scale);
    *seconds += clock_.NowSeconds() - t0;
  } else {
    if (comm_.size() > 1) RETURN_IF_ERROR(comm_.AllReduceSum(grads, n, comm_options_));
    *seconds += clock_.NowSeconds() - t0;
    if (scaler.checks_gradients()) finite = UnscaleAndCheckFinite(grads, n, inv_scale);
  }
  return finite || !scaler.checks_gradients();
}

void DataParallelStep::MaybeInjectInf() {
  const InjectInf& inject = mixed_.inject_inf;
  if (!inject.active() || steps_run_ != inject.step || comm_.rank() != inject.rank) return;
  for (FlatParameters* p : {inject.g ? &model_.g_params() : nullptr, inject.d ? &model_.d_params() : nullptr}) {
    if (p != nullptr) p->grads().data()[p->grads().numel() / 2] = std::numeric_limits<float>::infinity();
  }
}

absl::StatusOr<DataParallelStepResult> DataParallelStep::Run(const Tensor& real, const Tensor& z,
                                                             int64_t global_batch, uint64_t dropout_seed) {
  CHECK_GT(global_batch, 0);
  ++steps_run_;
  const double t0 = clock_.NowSeconds();
  Context ctx;
  ctx.backend = &backend_;
  ctx.dropout_seed = dropout_seed;
  ctx.sync_bn = (sync_bn_ && comm_.size() > 1) ? &reducer_ : nullptr;
  ctx.precision = mixed_.precision;
  const double share = static_cast<double>(real.dim(0)) / static_cast<double>(global_batch);
  const GanLossWeights weights{static_cast<float>(share * d_scaler_.scale()),
                               static_cast<float>(share * g_scaler_.scale())};
  const GanStepResult r = ComputeGanGradients(ctx, model_, real, z, weights);
  RETURN_IF_ERROR(reducer_.status());
  if (slowdown_.active()) {
    const double spent_ms = (clock_.NowSeconds() - t0) * 1e3;
    const double sleep_ms = slowdown_.extra_ms + (slowdown_.factor - 1.0) * spent_ms;
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(sleep_ms * 1e3)));
  }
  MaybeInjectInf();

  DataParallelStepResult out;
  out.d_loss = r.d_loss;
  out.g_loss = r.g_loss;
  ASSIGN_OR_RETURN(const bool d_ok, ExchangeGradients(model_.d_params(), d_scaler_, &out.allreduce_s));
  ASSIGN_OR_RETURN(const bool g_ok, ExchangeGradients(model_.g_params(), g_scaler_, &out.allreduce_s));
  out.d_stepped = d_scaler_.Update(d_ok);
  out.g_stepped = g_scaler_.Update(g_ok);
  if (out.d_stepped) d_opt_.Step(backend_, model_.d_params().params(), model_.d_params().grads());
  if (out.g_stepped) g_opt_.Step(backend_, model_.g_params().params(), model_.g_params().grads());
  out.compute_s = clock_.NowSeconds() - t0 - out.allreduce_s;
  return out;
}

absl::Status BroadcastModel(Communicator& comm, Dcgan& model, const CommOptions& options) {
  for (FlatParameters* p : {&model.g_params(), &model.d_params()}) {
    RETURN_IF_ERROR(comm.Broadcast(p->params().data(), static_cast<int64_t>(p->params().nbytes()), 0, options));
    RETURN_IF_ERROR(comm.Broadcast(p->buffers().data(), static_cast<int64_t>(p->buffers().nbytes()), 0, options));
  }
  return absl::OkStatus();
}

}  // namespace gantry
