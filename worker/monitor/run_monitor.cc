#include "worker/monitor/run_monitor.h"

#include <cmath>
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "report/time_to_target.h"
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

std::vector<std::pair<std::string, double>> EpochScalars(const EpochRow& row, bool validated) {
  static const auto* kLabels = new absl::flat_hash_set<std::string>{"batch_size", "epoch", "world_size",
                                                                     "energy_estimated", "energy_source"};
  std::vector<std::pair<std::string, double>> scalars;
  for (const EpochColumn& column : EpochColumns()) {
    const std::string name = column.name;
    if (kLabels->contains(name)) continue;
    if (absl::StartsWith(name, "quality_") && row.quality_fd < 0) continue;
    if (name == "quality_kid" && !std::isfinite(row.quality_kid)) continue;  // no KID (the judge's runs)
    if (absl::StartsWith(name, "val_") && !validated) continue;
    if (absl::StartsWith(name, "energy_") && row.energy_source == static_cast<int>(EnergySource::kNone)) continue;
    std::visit([&](auto member) { scalars.emplace_back("epoch/" + name, static_cast<double>(row.*member)); },
               column.member);
  }
  return scalars;
}

RunMonitor::RunMonitor(const TrainConfig& config, const RunFolder& folder, const std::string& rapl_root)
    : config_(config), folder_(folder), energy_(OpenRapl(rapl_root), config.watts_per_core) {}

void RunMonitor::LogEnergySource() const { spdlog::info("energy per epoch from {}", energy_.Source()); }

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

void RunMonitor::AddEnergy(double cpu_seconds, double gpu_joules, EpochRow& row) {
  const EpochEnergy e = energy_.Stop(cpu_seconds, gpu_joules);
  row.energy_j = e.joules;
  const int64_t samples = row.steps * row.batch_size;
  row.energy_j_per_sample = samples > 0 ? e.joules / static_cast<double>(samples) : 0.0;
  row.energy_estimated = e.estimated() ? 1 : 0;
  row.energy_source = static_cast<int>(e.source);
}

absl::Status RunMonitor::OnEpochDone(const EpochRow& row, int64_t global_step, const std::string& sample_png,
                                     bool validated) {
  if (!tensorboard_) return absl::OkStatus();
  for (const auto& [tag, value] : EpochScalars(row, validated)) {
    tensorboard_->AddScalar(tag, global_step, value);
  }
  ASSIGN_OR_RETURN(const std::vector<uint8_t> png, ReadFileBytes(sample_png, kMaxSamplePngBytes));
  RETURN_IF_ERROR(tensorboard_->AddPng("samples", global_step, std::string(png.begin(), png.end())));
  return tensorboard_->Flush();
}

absl::Status RunMonitor::FinishRun(const std::vector<EpochRow>& rows) {
  if (tensorboard_) RETURN_IF_ERROR(tensorboard_->Flush());
  RETURN_IF_ERROR(WriteTimingPlot(folder_.File("timing.png"), rows, GoalOf(config_.target.fd, config_.target.rel_l2)));
  return WriteLossPlot(folder_.File("losses.png"), losses_);
}

}  // namespace gantry
