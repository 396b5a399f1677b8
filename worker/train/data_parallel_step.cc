#include "worker/train/data_parallel_step.h"

#include <chrono>
#include <thread>

#include "common/status_macros.h"

namespace gantry {

DataParallelStep::DataParallelStep(Dcgan& model, Optimizer& g_opt, Optimizer& d_opt, Communicator& comm,
                                   Backend& backend, const CommOptions& comm_options, bool sync_bn,
                                   const Clock& clock, DebugSlowdown slowdown)
    : model_(model),
      g_opt_(g_opt),
      d_opt_(d_opt),
      comm_(comm),
      backend_(backend),
      comm_options_(comm_options),
      reducer_(comm, comm_options),
      sync_bn_(sync_bn),
      clock_(clock),
      slowdown_(slowdown) {}

absl::Status DataParallelStep::AllReduceGradients(FlatParameters& params, double* seconds) {
  if (comm_.size() == 1) return absl::OkStatus();
  const double t0 = clock_.NowSeconds();
  absl::Status s = comm_.AllReduceSum(params.grads().data(), params.grads().numel(), comm_options_);
  *seconds += clock_.NowSeconds() - t0;
  return s;
}

absl::StatusOr<DataParallelStepResult> DataParallelStep::Run(const Tensor& real, const Tensor& z,
                                                             int64_t global_batch, uint64_t dropout_seed) {
  CHECK_GT(global_batch, 0);
  const double t0 = clock_.NowSeconds();
  Context ctx;
  ctx.backend = &backend_;
  ctx.dropout_seed = dropout_seed;
  ctx.sync_bn = (sync_bn_ && comm_.size() > 1) ? &reducer_ : nullptr;
  const float weight = static_cast<float>(static_cast<double>(real.dim(0)) / static_cast<double>(global_batch));
  const GanStepResult r = ComputeGanGradients(ctx, model_, real, z, weight);
  RETURN_IF_ERROR(reducer_.status());
  if (slowdown_.active()) {
    const double spent_ms = (clock_.NowSeconds() - t0) * 1e3;
    const double sleep_ms = slowdown_.extra_ms + (slowdown_.factor - 1.0) * spent_ms;
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(sleep_ms * 1e3)));
  }

  DataParallelStepResult out;
  out.d_loss = r.d_loss;
  out.g_loss = r.g_loss;
  RETURN_IF_ERROR(AllReduceGradients(model_.d_params(), &out.allreduce_s));
  RETURN_IF_ERROR(AllReduceGradients(model_.g_params(), &out.allreduce_s));
  d_opt_.Step(backend_, model_.d_params().params(), model_.d_params().grads());
  g_opt_.Step(backend_, model_.g_params().params(), model_.g_params().grads());
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
