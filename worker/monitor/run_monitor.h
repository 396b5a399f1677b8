// Rank 0's monitoring of a run beyond epochs.csv: the energy of each epoch
// (energy_meter.h), TensorBoard event files with --tensorboard (tensorboard_log.h), and
// the per-step losses kept for losses.png (run_plots.h), which it draws with timing.png
// when the run ends. The trainer calls it at the points below, on rank 0 only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "report/epoch_metrics.h"
#include "runspec/train_config.h"
#include "worker/monitor/energy_meter.h"
#include "worker/monitor/run_plots.h"
#include "worker/monitor/tensorboard_log.h"
#include "worker/run/run_folder.h"

namespace gantry {

// One step's numbers, as rank 0 sees them.
struct StepSample {
  int64_t global_step = 0;  // at this batch size, 1-based
  double d_loss = 0;        // the step's losses (weighted over the ranks)
  double g_loss = 0;
  double loss_scale_g = 1;
  double loss_scale_d = 1;
  double samples_per_s = 0;  // over the recent steps
};

// The TensorBoard scalars of an epoch's row: each epochs.csv column that measures
// something, by its column name (epoch/seconds, epoch/quality_fd, epoch/val_l1, ...).
// Left out: the row's keys and labels (batch_size, epoch, world_size, energy_estimated,
// energy_source), the quality columns of an unscored epoch (-1), the flow validation
// columns of an epoch without them (`validated` false), and the energy of an
// unmeasured epoch.
std::vector<std::pair<std::string, double>> EpochScalars(const EpochRow& row, bool validated);

class RunMonitor {
 public:
  // `rapl_root`: the powercap folder (tests pass a fake one).
  RunMonitor(const TrainConfig& config, const RunFolder& folder, const std::string& rapl_root = "/sys/class/powercap");

  // A batch size's training starts (or resumes): opens its TensorBoard folder.
  absl::Status StartBatchSize(int64_t batch_size);
  // The epochs' energy comes from the ranks' GPU counters (EnergyMeter::CountGpus).
  void CountGpus(std::string description) { energy_.CountGpus(std::move(description)); }
  // Logs where the epochs' energy comes from ("energy per epoch from ..."); once all
  // sources are known, before the first epoch.
  void LogEnergySource() const;
  void StartEpoch() { energy_.Start(); }
  void OnStep(const StepSample& step);
  // Fills the row's energy columns; `cpu_seconds`: all ranks' CPU time in the epoch;
  // `gpu_joules`: their GPUs' energy in it, used after CountGpus (NaN: not measured).
  void AddEnergy(double cpu_seconds, double gpu_joules, EpochRow& row);
  // After the epoch's row and sample grid (`sample_png`) were written. With
  // --tensorboard: the row's measures as scalars epoch/<column> (EpochScalars) and the
  // sample grid as the image "samples".
  // `validated`: the row holds held-out scores (val_l1, val_rel_l2).
  absl::Status OnEpochDone(const EpochRow& row, int64_t global_step, const std::string& sample_png, bool validated);
  // The run ended: timing.png from `rows` (the whole run's) and losses.png from the
  // steps this process trained.
  absl::Status FinishRun(const std::vector<EpochRow>& rows);

 private:
  const TrainConfig& config_;
  const RunFolder& folder_;
  EnergyMeter energy_;
  std::optional<TensorBoardLog> tensorboard_;
  LossHistory losses_;
};

}  // namespace gantry
