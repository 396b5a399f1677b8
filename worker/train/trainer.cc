#include "worker/train/trainer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/data/batch_sampler.h"
#include "worker/data/prefetch_loader.h"
#include "worker/models/gan_step.h"
#include "worker/tensor/random.h"
#include "worker/train/sample_writer.h"

namespace gantry {
namespace {

constexpr int64_t kSampleCount = 64;                 // an 8x8 grid
constexpr uint64_t kNoiseStream = 0x6e6f697365ull;   // "noise"
constexpr uint64_t kSampleStream = 0x73616d706cull;  // "sampl"
constexpr uint64_t kDropoutStream = 0x64726f70ull;   // "drop"

Tensor NormalNoise(Rng& rng, int64_t rows, int64_t dim) {
  Tensor z = Tensor::Zeros(Shape{rows, dim});
  float* p = z.data();
  for (int64_t i = 0; i < z.numel(); ++i) p[i] = static_cast<float>(rng.Normal());
  return z;
}

std::string FormatDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, seconds));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s / 60) % 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

// Rate-limited progress lines: epoch, step, throughput, ETA and losses.
class ProgressLine {
 public:
  ProgressLine(const Clock& clock, double interval_s) : clock_(clock), interval_s_(interval_s) {
    last_ = clock_.NowSeconds();
  }

  void MaybePrint(int64_t batch, int64_t epoch, int64_t epochs, int64_t step, int64_t steps,
                  const EpochAccumulator& acc) {
    const double now = clock_.NowSeconds();
    if (now - last_ < interval_s_ || acc.steps() == 0) return;
    last_ = now;
    const double rate = acc.RecentSamplesPerSecond();
    const double eta = rate > 0 ? static_cast<double>((steps - step) * batch) / rate : 0.0;
    spdlog::info("batch {} epoch {}/{} step {}/{} ({:.0f}%) {:.1f} samples/s ETA {} d_loss {:.4f} g_loss {:.4f}",
                 batch, epoch, epochs, step, steps, 100.0 * static_cast<double>(step) / static_cast<double>(steps),
                 rate, FormatDuration(eta), acc.mean_d_loss(), acc.mean_g_loss());
  }

 private:
  const Clock& clock_;
  double interval_s_;
  double last_;
};

}  // namespace

Trainer::Trainer(const TrainConfig& config, const ImageDataset& data, const RunFolder& folder, const Clock& clock,
                 Backend& backend)
    : config_(config), data_(data), folder_(folder), clock_(clock), backend_(backend) {}

absl::StatusOr<std::vector<EpochRow>> Trainer::Run() {
  std::vector<EpochRow> all;
  for (int64_t batch : config_.batch_sizes) {
    if (batch > data_.count) {
      return absl::InvalidArgumentError(absl::StrCat("--batch-size ", batch, " exceeds the ", data_.count,
                                                     " training images; use a batch size <= ", data_.count));
    }
  }
  for (int64_t batch : config_.batch_sizes) {
    ASSIGN_OR_RETURN(std::vector<EpochRow> rows, TrainOneBatchSize(batch));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

absl::StatusOr<std::vector<EpochRow>> Trainer::TrainOneBatchSize(int64_t batch) {
  const bool sweep = config_.batch_sizes.size() > 1;
  Dcgan model(config_.dcgan);
  model.Initialize(config_.init, config_.seed);
  ASSIGN_OR_RETURN(auto g_opt, MakeOptimizer(config_.optimizer, model.g_params().num_params()));
  ASSIGN_OR_RETURN(auto d_opt, MakeOptimizer(config_.optimizer, model.d_params().num_params()));

  const EpochSampler sampler(data_.count, config_.seed);
  Rng noise_rng(Mix64(config_.seed ^ kNoiseStream));
  Rng sample_rng(Mix64(config_.seed ^ kSampleStream));
  const Tensor fixed_noise = NormalNoise(sample_rng, kSampleCount, config_.dcgan.noise_dim);
  const int64_t steps_per_epoch = StepsPerEpoch(data_.count, batch);
  int64_t steps_left = config_.max_steps > 0 ? config_.max_steps : INT64_MAX;
  int64_t global_step = 0;

  spdlog::info("training dcgan at global batch {}: {} steps/epoch x {} epochs ({} images, {} left over per epoch)",
               batch, steps_per_epoch, config_.epochs, data_.count, data_.count - steps_per_epoch * batch);
  std::vector<EpochRow> rows;
  Context ctx;
  ctx.backend = &backend_;
  for (int64_t epoch = 1; epoch <= config_.epochs && steps_left > 0; ++epoch) {
    const int64_t steps = std::min(steps_per_epoch, steps_left);
    PrefetchLoader loader(data_, sampler, batch, epoch, 0, batch);
    EpochAccumulator acc(batch, epoch);
    ProgressLine progress(clock_, config_.progress_seconds);
    const double epoch_start = clock_.NowSeconds();
    for (int64_t step = 0; step < steps; ++step) {
      const double t0 = clock_.NowSeconds();
      std::optional<Tensor> real = loader.Next();
      if (!real.has_value()) return absl::InternalError("data loader ended before the epoch's last step");
      const double t1 = clock_.NowSeconds();
      const Tensor z = NormalNoise(noise_rng, batch, config_.dcgan.noise_dim);
      ctx.dropout_seed = Mix64(config_.seed ^ kDropoutStream ^ Mix64(static_cast<uint64_t>(global_step)));
      const GanStepResult r = ComputeGanGradients(ctx, model, *real, z);
      if (!std::isfinite(r.d_loss) || !std::isfinite(r.g_loss)) {
        return absl::InternalError(absl::StrFormat(
            "batch %d epoch %d step %d: loss is not finite (d_loss %g, g_loss %g); lower --lr", batch, epoch,
            step + 1, r.d_loss, r.g_loss));
      }
      d_opt->Step(backend_, model.d_params().params(), model.d_params().grads());
      g_opt->Step(backend_, model.g_params().params(), model.g_params().grads());
      acc.AddStep(clock_.NowSeconds() - t0, t1 - t0, r.d_loss, r.g_loss);
      ++global_step;
      progress.MaybePrint(batch, epoch, config_.epochs, step + 1, steps, acc);
    }
    steps_left -= steps;
    const EpochRow row = acc.Finish(clock_.NowSeconds() - epoch_start);
    RETURN_IF_ERROR(folder_.AppendEpochRow(row));
    ASSIGN_OR_RETURN(const std::string png, folder_.SamplePath(batch, sweep, epoch, "png"));
    ASSIGN_OR_RETURN(const std::string npy, folder_.SamplePath(batch, sweep, epoch, "npy"));
    RETURN_IF_ERROR(WriteGeneratorSamples(backend_, model.generator(), fixed_noise, png, npy));
    spdlog::info("batch {} epoch {} done: {:.1f} s, {} steps, steady {:.1f} ms/step, {:.1f} samples/s, "
                 "d_loss {:.4f} g_loss {:.4f}; samples: {}",
                 batch, epoch, row.seconds, row.steps, row.steady_step_ms, row.samples_per_s, row.d_loss,
                 row.g_loss, png);
    rows.push_back(row);
  }
  return rows;
}

std::string FormatEpochTable(const std::vector<EpochRow>& rows) {
  std::string out = absl::StrFormat("%6s %5s %6s %9s %9s %11s %8s %8s\n", "batch", "epoch", "steps", "seconds",
                                    "step_ms", "samples/s", "d_loss", "g_loss");
  for (const EpochRow& r : rows) {
    absl::StrAppendFormat(&out, "%6d %5d %6d %9.1f %9.2f %11.1f %8.4f %8.4f\n", r.batch_size, r.epoch, r.steps,
                          r.seconds, r.steady_step_ms, r.samples_per_s, r.d_loss, r.g_loss);
  }
  return out;
}

}  // namespace gantry
