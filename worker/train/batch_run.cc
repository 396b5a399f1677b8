#include "worker/train/batch_run.h"

#include "common/batch_shares.h"
#include "common/status_macros.h"
#include "runspec/augment_policy.h"
#include "worker/checkpoint/checkpoint_match.h"
#include "worker/checkpoint/network_state.h"

namespace gantry {
namespace {

constexpr uint64_t kNoiseStream = 0x6e6f697365ull;  // "noise"

OptimizerState CaptureOptimizer(const Optimizer& opt) {
  OptimizerState o{opt.name(), opt.steps_taken(), {}};
  for (const Tensor& state : opt.state()) {
    const Tensor t = state.On(Device::kCpu);
    o.buffers.emplace_back(t.data(), t.data() + t.numel());
  }
  return o;
}

}  // namespace

BatchRun::BatchRun(const TrainConfig& c, std::unique_ptr<GanModel> model, int64_t dataset_rows, int64_t batch_index,
                   int world, const Clock& clock)
    : batch_index(batch_index),
      batch(c.batch_sizes[static_cast<size_t>(batch_index)]),
      model(std::move(model)),
      augment(AugmentPolicyName(c.augment)),
      sampler(dataset_rows, c.seed),
      noise_rng(Mix64(c.seed ^ kNoiseStream)),
      shares(EvenShares(batch, world)),
      tracker(world, c.straggler, clock),
      steps_left(c.max_steps > 0 ? c.max_steps : INT64_MAX) {}

TrainingState CaptureBatchRun(BatchRun& run, const EpochInProgress& epoch, uint64_t seed,
                              int64_t dataset_images, int world_size) {
  CHECK(run.g_opt && run.d_opt && run.step) << "capture before the batch run was set up";
  TrainingState s;
  SweepPosition& p = s.position;
  p.batch_index = run.batch_index;
  p.batch_size = run.batch;
  p.epoch = run.epoch;
  p.step_in_epoch = run.step_in_epoch;
  p.batch_step = run.global_step;
  p.steps_left = run.steps_left;
  p.seed = seed;
  p.dataset_images = dataset_images;
  p.world_size = world_size;
  p.noise_rng_state = run.noise_rng.state();
  p.skips_logged = run.skips_logged;
  s.augment = run.augment;
  s.model = run.model->name();
  s.g = CaptureNetwork(run.model->g_params());
  s.d = CaptureNetwork(run.model->d_params());
  if (run.g_average) {
    s.g_average = CaptureNetworkValues(run.model->g_params(), run.g_average->params(), run.g_average->buffers());
  }
  s.g_opt = CaptureOptimizer(*run.g_opt);
  s.d_opt = CaptureOptimizer(*run.d_opt);
  s.g_scaler = run.step->g_scaler().state();
  s.d_scaler = run.step->d_scaler().state();
  s.shares = run.shares;
  s.epoch = epoch;
  return s;
}

absl::Status RestoreBatchRun(const TrainingState& s, int world_size, BatchRun& run) {
  CHECK(run.g_opt && run.d_opt && run.step) << "restore before the batch run was set up";
  const SweepPosition& p = s.position;
  CHECK_EQ(p.batch_index, run.batch_index);
  RETURN_IF_ERROR(run.g_opt->RestoreState(s.g_opt.buffers, s.g_opt.steps_taken));
  RETURN_IF_ERROR(run.d_opt->RestoreState(s.d_opt.buffers, s.d_opt.steps_taken));
  RETURN_IF_ERROR(run.step->Restore(s.g_scaler, s.d_scaler, p.batch_step));
  RETURN_IF_ERROR(LoadNetwork(s.g, "generator", run.model->g_params()));
  RETURN_IF_ERROR(LoadNetwork(s.d, "discriminator", run.model->d_params()));
  if (run.g_average) {
    // CheckMatchesRun accepted the checkpoint, so it holds the average a --g-ema run needs.
    CHECK(s.g_average.has_value()) << "a --g-ema run resumed from a checkpoint without its average";
    RETURN_IF_ERROR(run.g_average->Restore(s.g_average->params, s.g_average->buffers));
  }
  run.noise_rng.set_state(p.noise_rng_state);
  if (static_cast<int>(s.shares.size()) == world_size) run.shares = s.shares;
  run.epoch = p.epoch;
  run.step_in_epoch = p.step_in_epoch;
  run.global_step = p.batch_step;
  run.steps_left = p.steps_left;
  run.skips_logged = p.skips_logged;
  run.resumed = s.epoch;
  return absl::OkStatus();
}

}  // namespace gantry
