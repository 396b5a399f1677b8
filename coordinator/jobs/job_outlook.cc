#include "coordinator/jobs/job_outlook.h"

#include <algorithm>
#include <vector>

#include "coordinator/jobs/coordinator.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"

namespace gantry {
namespace {

// Steps of batch size `batch` over the run: `epochs` epochs of the images one epoch of
// the batch in progress covers, capped by max_steps.
int64_t StepsOf(int64_t batch, int64_t epochs, int64_t max_steps, int64_t images_per_epoch) {
  const int64_t per_epoch = std::max<int64_t>(images_per_epoch / std::max<int64_t>(batch, 1), 1);
  const int64_t steps = per_epoch * epochs;
  return max_steps > 0 ? std::min(steps, max_steps) : steps;
}

}  // namespace

std::optional<JobOutlook> OutlookOf(const v1::Job& job) {
  if (job.state() == v1::JOB_STATE_SUCCEEDED) return JobOutlook{1.0, 0.0};
  if (!job.has_progress() || job.progress().steps_per_epoch() <= 0) return std::nullopt;
  if (job.has_rollout() || job.has_generate()) {
    // Its progress is its model step; its rate is in tiles, whose count per step only the
    // group knows, so no ETA.
    const double steps = static_cast<double>(job.progress().steps_per_epoch());
    return JobOutlook{std::clamp(static_cast<double>(job.progress().step()) / steps, 0.0, 1.0), std::nullopt};
  }
  absl::StatusOr<TrainConfig> config = ResolveTrainConfig(RunSpecToSettings(job.spec()));
  if (!config.ok()) return std::nullopt;
  const v1::Progress& p = job.progress();
  const std::vector<int64_t>& sweep = config->batch_sizes;
  const auto current = std::find(sweep.begin(), sweep.end(), p.batch_size());
  if (current == sweep.end()) return std::nullopt;
  const int64_t images_per_epoch = p.steps_per_epoch() * p.batch_size();

  double total = 0, done = 0;
  for (auto it = sweep.begin(); it != sweep.end(); ++it) {
    const double samples = static_cast<double>(StepsOf(*it, config->epochs, config->max_steps, images_per_epoch)) *
                           static_cast<double>(*it);
    total += samples;
    if (it < current) done += samples;
  }
  const int64_t current_steps = StepsOf(p.batch_size(), config->epochs, config->max_steps, images_per_epoch);
  done += static_cast<double>(std::clamp<int64_t>(p.global_step(), 0, current_steps)) *
          static_cast<double>(p.batch_size());
  JobOutlook outlook;
  outlook.fraction_done = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0;
  if (!IsTerminal(job.state()) && p.samples_per_s() > 0) outlook.eta_seconds = (total - done) / p.samples_per_s();
  return outlook;
}

}  // namespace gantry
