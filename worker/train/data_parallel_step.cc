#include "worker/train/data_parallel_step.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gantry {

DataParallelStep::DataParallelStep(GanModel& model, Optimizer& g_opt, Optimizer& d_opt, Communicator& comm,
                                   Backend& backend, const CommOptions& comm_options, bool sync_bn,
                                   const Clock& clock, DebugSlowdown slowdown, const MixedPrecision& mixed,
                                   Communicator* gradient_comm)
    : model_(model),
      g_opt_(g_opt),
      d_opt_(d_opt),
      comm_(comm),
      gradient_comm_(gradient_comm != nullptr ? *gradient_comm : comm),
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
    const int64_t largest = std::max(model_.g_params().num_params(), model_.d_params().num_params());
    wire_ = Tensor::Uninitialized(Shape{largest}, DType::kBF16, backend_.device());
  }
  CHECK_EQ(gradient_comm_.size(), comm_.size()) << "the gradient communicator joins other ranks";
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

absl::Status DataParallelStep::AllReduce(const Tensor& buffer) {
  const Tensor staged = buffer.On(gradient_comm_.reduces());
  const int64_t n = buffer.numel();
  RETURN_IF_ERROR(buffer.dtype() == DType::kBF16 ? gradient_comm_.AllReduceSumBf16(staged.data_bf16_bits(), n, comm_options_)
                                                 : gradient_comm_.AllReduceSum(staged.data(), n, comm_options_));
  buffer.CopyFrom(staged);
  return absl::OkStatus();
}

absl::StatusOr<bool> DataParallelStep::ExchangeGradients(FlatParameters& params, const LossScaler& scaler,
                                                         double* seconds) {
  const Tensor& grads = params.grads();
  const int64_t n = grads.numel();
  const double t0 = clock_.NowSeconds();
  if (comm_.size() > 1 && mixed_.allreduce_dtype == WireDtype::kBf16) {
    const Tensor wire = wire_.ViewAt(0, Shape{n});
    backend_.ToWireBf16(n, grads.data(), wire.data_bf16_bits());
    RETURN_IF_ERROR(AllReduce(wire));
    const bool may_step = UnscaleAndCheck(params, scaler, wire.data_bf16_bits());
    *seconds += clock_.NowSeconds() - t0;
    return may_step;
  }
  if (comm_.size() > 1) RETURN_IF_ERROR(AllReduce(grads));
  *seconds += clock_.NowSeconds() - t0;
  return UnscaleAndCheck(params, scaler, nullptr);
}

absl::Status DataParallelStep::EnableOverlap(const BucketCaps& caps) {
  if (comm_.size() == 1) return absl::OkStatus();
  if (backend_.device() != gradient_comm_.reduces()) {
    return absl::UnimplementedError(absl::StrCat("the ", gradient_comm_.backend_name(),
                                                 " transport reduces in another memory than the backend computes in; "
                                                 "it exchanges after backward"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Communicator> duplicate, gradient_comm_.Duplicate(comm_options_));
  overlap_ = std::make_unique<OverlappedExchange>(std::move(duplicate), comm_options_, model_, backend_, caps,
                                                  mixed_.allreduce_dtype);
  overlap_in_use_ = true;

  return absl::OkStatus();
}

void DataParallelStep::UseOverlap(bool on, bool for_good) {
  CHECK(overlap_ != nullptr || comm_.size() == 1) << "UseOverlap before EnableOverlap succeeded";
  if (overlap_ == nullptr) return;
  overlap_in_use_ = on;
  if (!for_good) return;
  if (on) {
    wire_ = Tensor();  // the exchange keeps a bf16 wire of its own, per network
  } else {
    overlap_.reset();
  }
}

bool DataParallelStep::UnscaleAndCheck(FlatParameters& params, const LossScaler& scaler,
                                       const uint16_t* summed_wire) {
  const int64_t n = params.num_params();
  const float inv_scale = 1.0f / scaler.scale();
  float* grads = params.grads().data();
  // The bf16 conversion always runs: it writes the gradient back to fp32.
  if (summed_wire != nullptr) {
    return backend_.UnscaleFromBf16AndCheckFinite(n, summed_wire, inv_scale, grads) || !scaler.checks_gradients();
  }
  return !scaler.checks_gradients() || backend_.UnscaleAndCheckFinite(n, inv_scale, grads);
}

absl::StatusOr<std::pair<bool, bool>> DataParallelStep::FinishOverlappedExchange(DataParallelStepResult* out) {
  const double t0 = clock_.NowSeconds();
  overlap_->SendRest(GanNetwork::kGenerator);
  overlap_->SendRest(GanNetwork::kDiscriminator);
  RETURN_IF_ERROR(overlap_->Wait());
  const bool bf16 = mixed_.allreduce_dtype == WireDtype::kBf16;
  const bool g_ok = UnscaleAndCheck(model_.g_params(), g_scaler_,
                                    bf16 ? overlap_->SummedWire(GanNetwork::kGenerator) : nullptr);
  const bool d_ok = UnscaleAndCheck(model_.d_params(), d_scaler_,
                                    bf16 ? overlap_->SummedWire(GanNetwork::kDiscriminator) : nullptr);
  out->allreduce_exposed_s = clock_.NowSeconds() - t0;
  out->allreduce_s = std::max(overlap_->TakeAllReduceSeconds(), out->allreduce_exposed_s);
  return std::make_pair(d_ok, g_ok);
}

bool DataParallelStep::InjectsThisStep() const {
  const InjectInf& inject = mixed_.inject_inf;
  return inject.active() && steps_run_ == inject.step && comm_.rank() == inject.rank;
}

void DataParallelStep::MaybeInjectInf() {
  const InjectInf& inject = mixed_.inject_inf;
  if (!InjectsThisStep()) return;
  const Tensor inf = Tensor::FromVector(Shape{1}, {std::numeric_limits<float>::infinity()});
  for (FlatParameters* p : {inject.g ? &model_.g_params() : nullptr, inject.d ? &model_.d_params() : nullptr}) {
    if (p != nullptr) p->grads().ViewAt(p->grads().numel() / 2, Shape{1}).CopyFrom(inf);
  }
}

absl::StatusOr<DataParallelStepResult> DataParallelStep::Run(const GanInputs& inputs, int64_t global_batch,
                                                             uint64_t dropout_seed) {
  CHECK_GT(global_batch, 0);
  ++steps_run_;
  const double t0 = clock_.NowSeconds();
  Context ctx;
  ctx.backend = &backend_;
  ctx.dropout_seed = dropout_seed;
  ctx.row_offset = inputs.row_offset;  // this rank's rows of the global batch start here
  ctx.sync_bn = (sync_bn_ && comm_.size() > 1) ? &reducer_ : nullptr;
  ctx.precision = mixed_.precision;
  const double share = static_cast<double>(inputs.real.dim(0)) / static_cast<double>(global_batch);
  const GanLossWeights weights{static_cast<float>(share * d_scaler_.scale()),
                               static_cast<float>(share * g_scaler_.scale())};
  GanInputs step_inputs = inputs;
  if (overlapping()) {
    overlap_->BeginStep();
    // A step that poisons its gradients sends them after, poisoned (FinishOverlappedExchange).
    if (!InjectsThisStep()) step_inputs.gradients_ready = overlap_->hooks();
  }
  const GanStepResult r = model_.ComputeGradients(ctx, step_inputs, weights);
  // A GPU queues the backward passes; wait, so compute_s holds them and allreduce_s only
  // the exchange (no-op on the CPU backends).
  backend_.Synchronize();
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
  bool d_ok = true, g_ok = true;
  if (overlapping()) {
    ASSIGN_OR_RETURN(const auto finite, FinishOverlappedExchange(&out));
    std::tie(d_ok, g_ok) = finite;
  } else {
    ASSIGN_OR_RETURN(d_ok, ExchangeGradients(model_.d_params(), d_scaler_, &out.allreduce_s));
    ASSIGN_OR_RETURN(g_ok, ExchangeGradients(model_.g_params(), g_scaler_, &out.allreduce_s));
    out.allreduce_exposed_s = out.allreduce_s;
  }
  out.d_stepped = d_scaler_.Update(d_ok);
  out.g_stepped = g_scaler_.Update(g_ok);
  if (out.d_stepped) d_opt_.Step(backend_, model_.d_params().params(), model_.d_params().grads());
  if (out.g_stepped) g_opt_.Step(backend_, model_.g_params().params(), model_.g_params().grads());
  backend_.Synchronize();
  out.compute_s = clock_.NowSeconds() - t0 - out.allreduce_exposed_s;
  return out;
}

absl::Status BroadcastModel(Communicator& comm, GanModel& model, const CommOptions& options) {
  for (FlatParameters* p : {&model.g_params(), &model.d_params()}) {
    for (const Tensor& flat : {p->params(), p->buffers()}) {
      const Tensor host = flat.On(Device::kCpu);
      RETURN_IF_ERROR(comm.Broadcast(host.data(), static_cast<int64_t>(host.nbytes()), 0, options));
      flat.CopyFrom(host);
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry
