#include "worker/checkpoint/checkpoint_match.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "runspec/augment_policy.h"
#include "worker/checkpoint/network_state.h"
#include "worker/data/batch_sampler.h"
#include "worker/models/model_registry.h"

namespace gantry {
namespace {

absl::Status Mismatch(const std::string& name, const std::string& what) {
  return absl::FailedPreconditionError(absl::StrCat(name, ": ", what));
}

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrCat("[", absl::StrJoin(dims, ","), "]"); }

absl::Status CheckLayout(const std::vector<LayoutEntry>& saved, const std::vector<LayoutEntry>& run,
                         const std::string& what, const std::string& name) {
  if (saved.size() != run.size()) {
    return Mismatch(name, absl::StrCat(what, ": the checkpoint has ", saved.size(), " tensors, the run's model has ",
                                       run.size(), " (the checkpoint belongs to another model)"));
  }
  for (size_t i = 0; i < saved.size(); ++i) {
    if (saved[i] != run[i]) {
      return Mismatch(name,
                      absl::StrCat(what, " tensor ", i, ": the checkpoint has ", NameForMessage(saved[i].name), " ",
                                   Dims(saved[i].dims), ", the run's model has ", run[i].name, " ", Dims(run[i].dims),
                                   " (the checkpoint belongs to another model configuration)"));
    }
  }
  return absl::OkStatus();
}

// The position must lie inside a run of this sweep on this many images.
absl::Status CheckPosition(const TrainingState& s, const std::string& name) {
  const SweepPosition& p = s.position;
  const int64_t steps_per_epoch = StepsPerEpoch(p.dataset_images, p.batch_size);
  const bool sane = p.epoch >= 1 && p.step_in_epoch >= 0 && p.step_in_epoch <= steps_per_epoch &&
                    p.batch_step >= 0 && p.run_step >= p.batch_step && p.steps_left >= 0 && p.world_size >= 1 &&
                    static_cast<int64_t>(s.epoch.sums.step_seconds.size()) == p.step_in_epoch;
  int64_t share_sum = 0;
  bool shares_positive = !s.shares.empty();
  for (int64_t share : s.shares) {
    share_sum += share;
    shares_positive = shares_positive && share > 0;
  }
  if (!sane || !shares_positive || share_sum != p.batch_size) {
    return absl::DataLossError(absl::StrCat(name, ": the saved position (epoch ", p.epoch, ", step ", p.step_in_epoch,
                                            " of ", steps_per_epoch, ", shares ", absl::StrJoin(s.shares, "/"),
                                            ") cannot come from a run; the file is damaged"));
  }
  return absl::OkStatus();
}

// A run with --g-ema resumes only with its average (shaped as G); one without ignores none.
absl::Status CheckAverage(const TrainingState& s, const CheckpointExpectations& run, const std::string& name) {
  if (s.g_average.has_value() != run.g_average) {
    return Mismatch(name, run.g_average ? "holds no generator average, but this run has --g-ema (the checkpoint "
                                          "belongs to a run without it)"
                                        : "holds a generator average, but this run has no --g-ema (the checkpoint "
                                          "belongs to a run with it)");
  }
  if (!s.g_average) return absl::OkStatus();
  RETURN_IF_ERROR(CheckLayout(s.g_average->param_layout, run.g_layout.param_layout, "G average parameters", name));
  return CheckLayout(s.g_average->buffer_layout, run.g_layout.buffer_layout, "G average buffers", name);
}

}  // namespace

CheckpointExpectations ExpectationsFor(const TrainConfig& config, int64_t dataset_images) {
  // ResolveTrainConfig accepts only ModelNames(), which a test keeps equal to RegisteredModels().
  const absl::StatusOr<std::unique_ptr<GanModel>> model = MakeModel(config);
  CHECK(model.ok()) << model.status();
  CheckpointExpectations e;
  e.model = config.model;
  e.g_layout.param_layout = LayoutOf((*model)->g_params().param_entries());
  e.g_layout.buffer_layout = LayoutOf((*model)->g_params().buffer_entries());
  e.d_layout.param_layout = LayoutOf((*model)->d_params().param_entries());
  e.d_layout.buffer_layout = LayoutOf((*model)->d_params().buffer_entries());
  e.optimizer = config.optimizer.kind;
  e.batch_sizes = config.batch_sizes;
  e.seed = config.seed;
  e.dataset_images = dataset_images;
  e.g_average = config.g_ema > 0;
  e.augment = AugmentPolicyName(config.augment);
  return e;
}

absl::Status CheckMatchesRun(const TrainingState& s, const CheckpointExpectations& run, const std::string& name) {
  const SweepPosition& p = s.position;
  if (s.model != run.model) {
    return Mismatch(name, absl::StrCat("saved by a run of --model ", s.model, ", this run trains --model ", run.model));
  }
  if (p.batch_index < 0 || p.batch_index >= static_cast<int64_t>(run.batch_sizes.size()) ||
      run.batch_sizes[static_cast<size_t>(p.batch_index)] != p.batch_size) {
    return Mismatch(name, absl::StrCat("saved at batch size ", p.batch_size, " (entry ", p.batch_index + 1,
                                       " of the sweep), but the run's batch sizes are ",
                                       absl::StrJoin(run.batch_sizes, ",")));
  }
  if (p.seed != run.seed) {
    return Mismatch(name, absl::StrCat("saved by a run with seed ", p.seed, ", this run's seed is ", run.seed));
  }
  if (s.augment != run.augment) {
    return Mismatch(name, absl::StrCat("saved by a run with --augment ", s.augment, ", this run has --augment ",
                                       run.augment, " (D would see other images than the run it continues)"));
  }
  if (p.dataset_images != run.dataset_images) {
    return Mismatch(name, absl::StrCat("saved by a run on ", p.dataset_images, " training images, this run has ",
                                       run.dataset_images, " (another dataset, --data-dir or --limit-images?)"));
  }
  RETURN_IF_ERROR(CheckLayout(s.g.param_layout, run.g_layout.param_layout, "G parameters", name));
  RETURN_IF_ERROR(CheckLayout(s.g.buffer_layout, run.g_layout.buffer_layout, "G buffers", name));
  RETURN_IF_ERROR(CheckLayout(s.d.param_layout, run.d_layout.param_layout, "D parameters", name));
  RETURN_IF_ERROR(CheckLayout(s.d.buffer_layout, run.d_layout.buffer_layout, "D buffers", name));
  RETURN_IF_ERROR(CheckAverage(s, run, name));
  for (const OptimizerState* o : {&s.g_opt, &s.d_opt}) {
    if (o->kind != run.optimizer) {
      return Mismatch(name, absl::StrCat("saved with optimizer ", o->kind, ", the run uses ", run.optimizer));
    }
  }
  return CheckPosition(s, name);
}

}  // namespace gantry
