#include "worker/train/run_monitor.h"

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

std::optional<RaplReader> OpenRapl(const std::string& root) {
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(root);
  if (rapl.ok()) return std::move(*rapl);
  // Only a refusal is worth a line: most machines (VMs, containers, arm64) have no RAPL.
  if (absl::IsPermissionDenied(rapl.status())) spdlog::info("energy: {}", std::string(rapl.status().message()));
  return std::nullopt;
}

constexpr size_t kMaxSamplePngBytes = 16 << 20;

}  // namespace

RunMonitor::RunMonitor(const TrainConfig& config, const RunFolder& folder, const std::string& rapl_root)
    : config_(config), folder_(folder), energy_(OpenRapl(rapl_root), config.watts_per_core) {
  spdlog::info("energy per epoch from {}", energy_.Source());
}

absl::Status RunMonitor::StartBatchSize(int64_t batch_size) {
  losses_.StartBatchSize(batch_size);
  tensorboard_.reset();
  if (!config_.tensorboard) return absl::OkStatus();
  ASSIGN_OR_RETURN(TensorBoardLog log, TensorBoardLog::Open(folder_.File(absl::StrCat("tensorboard/b", batch_size))));
  spdlog::info("TensorBoard events: {}", log.path());
  tensorboard_.emplace(std::move(log));
  return absl::OkStatus();
}

void RunMonitor::OnStep(const StepSample& s) {
  losses_.Add(s.global_step, s.d_loss, s.g_loss);
  if (!tensorboard_) return;
  tensorboard_->AddScalar("loss/d", s.global_step, s.d_loss);
  tensorboard_->AddScalar("loss/g", s.global_step, s.g_loss);
  tensorboard_->AddScalar("loss_scale/g", s.global_step, s.loss_scale_g);
  tensorboard_->AddScalar("loss_scale/d", s.global_step, s.loss_scale_d);
  tensorboard_->AddScalar("step/samples_per_s", s.global_step, s.samples_per_s);
}

void RunMonitor::AddEnergy(double cpu_seconds, EpochRow& row) {
  const EpochEnergy e = energy_.Stop(cpu_seconds);
  row.energy_j = e.joules;
  const int64_t samples = row.steps * row.batch_size;
  row.energy_j_per_sample = samples > 0 ? e.joules / static_cast<double>(samples) : 0.0;
  row.energy_estimated = e.estimated ? 1 : 0;
}

absl::Status RunMonitor::OnEpochDone(const EpochRow& row, int64_t global_step, const std::string& sample_png) {
  if (!tensorboard_) return absl::OkStatus();
  tensorboard_->AddScalar("epoch/seconds", global_step, row.seconds);
  tensorboard_->AddScalar("epoch/samples_per_s", global_step, row.samples_per_s);
  tensorboard_->AddScalar("epoch/d_loss", global_step, row.d_loss);
  tensorboard_->AddScalar("epoch/g_loss", global_step, row.g_loss);
  tensorboard_->AddScalar("epoch/energy_j", global_step, row.energy_j);
  tensorboard_->AddScalar("epoch/energy_j_per_sample", global_step, row.energy_j_per_sample);
  ASSIGN_OR_RETURN(const std::vector<uint8_t> png, ReadFileBytes(sample_png, kMaxSamplePngBytes));
  RETURN_IF_ERROR(tensorboard_->AddPng("samples", global_step, std::string(png.begin(), png.end())));
  return tensorboard_->Flush();
}

absl::Status RunMonitor::FinishRun(const std::vector<EpochRow>& rows) {
  if (tensorboard_) RETURN_IF_ERROR(tensorboard_->Flush());
  RETURN_IF_ERROR(WriteTimingPlot(folder_.File("timing.png"), rows));
  return WriteLossPlot(folder_.File("losses.png"), losses_);
}

}  // namespace gantry
