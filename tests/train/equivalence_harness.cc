#include "tests/train/equivalence_harness.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "common/batch_shares.h"
#include "common/status_macros.h"
#include "worker/comm/local_communicator.h"
#include "worker/models/dcgan.h"
#include "worker/optim/optimizer.h"
#include "worker/tensor/random.h"
#include "worker/train/data_parallel_step.h"

namespace gantry::testing {
namespace {

Tensor FixedBatch(uint64_t seed, const Shape& shape, bool normal) {
  Tensor t = Tensor::Zeros(shape);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data()[i] = static_cast<float>(normal ? rng.Normal() : 2.0 * rng.Uniform() - 1.0);
  }
  return t;
}

std::vector<float> Copy(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }

NetworkAfterStep Observe(const FlatParameters& p, const Optimizer& opt, const LossScaler& scaler, bool stepped) {
  NetworkAfterStep n;
  n.stepped = stepped;
  n.scale = scaler.scale();
  n.skipped = scaler.skipped_steps();
  n.optimizer_steps = opt.steps_taken();
  n.fingerprint = Fingerprint(p.params().data(), p.params().nbytes());
  for (const Tensor& t : opt.state()) n.fingerprint = Fingerprint(t.data(), t.nbytes(), n.fingerprint);
  return n;
}

}  // namespace

uint64_t Fingerprint(const void* data, size_t bytes, uint64_t h) {
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return h;
}

absl::StatusOr<TrainedParams> TrainFewSteps(Communicator& comm, const EquivalenceSetup& setup) {
  DcganConfig config;
  config.dropout = 0.0f;  // dropout masks depend on the local row index
  Dcgan model(config, Device::kCpu, setup.augment);
  model.Initialize(InitScheme::kGlorotUniform, comm.rank() == 0 ? 11 : 12345);
  const CommOptions opts{30.0};
  RETURN_IF_ERROR(BroadcastModel(comm, model, opts));

  OptimizerConfig oc;
  oc.kind = setup.optimizer;
  oc.lr = setup.optimizer == "sgd" ? 0.01f : 1e-4f;
  ASSIGN_OR_RETURN(auto g_opt, MakeOptimizer(oc, model.g_params().num_params()));
  ASSIGN_OR_RETURN(auto d_opt, MakeOptimizer(oc, model.d_params().num_params()));
  DataParallelStep step(model, *g_opt, *d_opt, comm, CpuBackend(), opts, setup.sync_bn, Clock::Real(), {},
                        setup.mixed);
  if (setup.overlap) {
    RETURN_IF_ERROR(step.EnableOverlap(*setup.overlap));
    if (comm.size() > 1 && !step.overlapped()) return absl::InternalError("overlap was asked for but is off");
  }
  TrainedParams out;
  out.initial_g = Copy(model.g_params().params());
  out.initial_d = Copy(model.d_params().params());

  // The shares describe the multi-rank run; a single rank always holds the whole batch.
  const bool use_given = static_cast<int>(setup.shares.size()) == comm.size();
  const std::vector<int64_t> shares = use_given ? setup.shares : EvenShares(setup.global_batch, comm.size());
  const RowRange rows = ShareRanges(shares)[static_cast<size_t>(comm.rank())];
  for (int s = 0; s < setup.steps; ++s) {
    const Tensor real = FixedBatch(100 + s, Shape{setup.global_batch, 1, 28, 28}, false);
    const Tensor z = FixedBatch(200 + s, Shape{setup.global_batch, 100}, true);
    const GanInputs inputs{real.Slice(rows.begin, rows.end), z.Slice(rows.begin, rows.end), rows.begin};
    if (setup.overlap && setup.overlapped_at) step.UseOverlap(setup.overlapped_at(s));
    ASSIGN_OR_RETURN(auto result, step.Run(inputs, setup.global_batch, /*dropout_seed=*/s));
    out.g_steps.push_back(Observe(model.g_params(), *g_opt, step.g_scaler(), result.g_stepped));
    out.d_steps.push_back(Observe(model.d_params(), *d_opt, step.d_scaler(), result.d_stepped));
  }
  out.g = Copy(model.g_params().params());
  out.d = Copy(model.d_params().params());
  out.g_buffers = Copy(model.g_params().buffers());
  return out;
}

double MaxScaledDifference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double scale = 0;
  for (float v : b) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double denom = 1e-3 * scale + std::fabs(static_cast<double>(b[i]));
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / denom);
  }
  return worst;
}

double DifferenceInUpdates(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& start) {
  return MaxAbsDifference(a, b) / MaxAbsDifference(b, start);
}

double MaxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

absl::StatusOr<std::vector<TrainedParams>> TrainOnThreadRanks(int ranks, const EquivalenceSetup& setup) {
  std::vector<TrainedParams> out(static_cast<size_t>(ranks));
  std::mutex mu;
  RETURN_IF_ERROR(RunRanks(ranks, [&](Communicator& comm) -> absl::Status {
    ASSIGN_OR_RETURN(TrainedParams p, TrainFewSteps(comm, setup));
    std::lock_guard<std::mutex> lock(mu);
    out[static_cast<size_t>(comm.rank())] = std::move(p);
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace gantry::testing
