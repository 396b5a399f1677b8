#include "runspec/train_config.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "runspec/datasets.h"
#include "runspec/engine_names.h"
#include "runspec/learning_rate_rule.h"
#include "runspec/precision_settings.h"

namespace gantry {
namespace {

// The ranges of the numeric settings. Each is wide enough for any real run and narrow
// enough that no arithmetic on it overflows (steps, batches, ranks) and no allocation it
// sizes is absurd before the memory estimate (memory_estimate.h) even looks at it.
constexpr IntRange kEpochs{1, 100'000};
constexpr IntRange kBatchSize{1, kMaxBatchSize};
constexpr IntRange kWarmupSteps{0, 1'000'000'000};
constexpr IntRange kImageSize{Pix2pixConfig::kMinImageSize, 4096};
constexpr IntRange kFilters{1, 1024};
constexpr IntRange kChannels{1, ImageDcganConfig::kMaxChannels};
constexpr IntRange kHorizon{1, 100'000};
constexpr IntRange kUnrollSteps{1, 64};
constexpr IntRange kCurriculumEpochs{0, 100'000};
constexpr IntRange kStepCount{0, kMaxRunSteps};  // --max-steps, --checkpoint-every-steps, --debug-crash-after-step
constexpr IntRange kImages{0, 1'000'000'000};
constexpr IntRange kKeepCheckpoints{1, 1000};
constexpr IntRange kStragglerWindow{1, kMaxStragglerWindow};
constexpr IntRange kSlowRank{-1, kMaxRank};

// "64" or "64,128,256,512": each in kBatchSize, none empty, none twice (a sweep trains
// each batch size once).
absl::StatusOr<std::vector<int64_t>> ParseBatchSizes(const std::string& name, const std::string& v) {
  const std::string accepted = absl::StrCat("positive integers up to ", kMaxBatchSize,
                                            ", comma-separated, each once, e.g. 64 or 64,128,256,512");
  std::vector<int64_t> sizes;
  int entry = 0;
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    ++entry;
    const absl::string_view text = absl::StripAsciiWhitespace(part);
    if (text.empty()) return Bad(name, v, absl::StrCat("entry ", entry, " is empty; ", accepted));
    absl::StatusOr<int64_t> b = ParseIntIn(name, text, kBatchSize);
    if (!b.ok()) return Bad(name, v, accepted);
    if (std::find(sizes.begin(), sizes.end(), *b) != sizes.end()) {
      return Bad(name, v, absl::StrCat(*b, " appears twice; ", accepted));
    }
    sizes.push_back(*b);
  }
  return sizes;
}

// The seed: any uint64 (a run file may hold the seed of another tool).
absl::Status SetSeed(const std::string& n, const std::string& v, TrainConfig& c) {
  ASSIGN_OR_RETURN(c.seed, ParseSeed(absl::StrCat("--", n), v));
  return absl::OkStatus();
}

Setting Named(const char* name, const char* help, const char* default_value, Setter apply) {
  return Setting{{name, help, default_value}, std::move(apply)};
}

// A switch ("--sync-bn" alone means true), off by default.
Setting Switch(const char* name, const char* help, std::function<bool&(TrainConfig&)> field) {
  return Setting{{name, help, "false", /*is_flag=*/true},
                 [field = std::move(field)](const std::string& n, const std::string& v, TrainConfig& c) {
                   ASSIGN_OR_RETURN(field(c), ParseBool(n, v));
                   return absl::OkStatus();
                 }};
}

// The settings of the run itself; the mixed-precision ones come from
// precision_settings.cc. Settings() joins them in display order.
const std::vector<Setting>& CoreSettings() {
  static const auto* settings = new std::vector<Setting>{
      Named("model", "network to train: dcgan | pix2pix", "dcgan",
            [](auto& n, auto& v, TrainConfig& c) { c.model = v; return OneOf(n, v, ModelNames()); }),
      Named("dataset", "mnist | fashion-mnist (IDX files) | flow (make-flow cases, with --model pix2pix) | images "
            "(your own images: a folder, or a file made by make-dataset)",
            "fashion-mnist",
            [](auto& n, auto& v, TrainConfig& c) { c.dataset = v; return OneOf(n, v, DatasetNames()); }),
      Named("data-dir", "folder holding the four IDX files, gzipped or not (default: the dataset's Debian location); "
            "flow: a case folder or a folder of cases; images: a folder of images or a packed image set", "",
            [](auto&, auto& v, TrainConfig& c) { c.data_dir = v; return absl::OkStatus(); }),
      IntSetting({"epochs", "epochs per batch size", "1"}, kEpochs, [](TrainConfig& c, int64_t v) { c.epochs = v; }),
      Setting{{"batch-size", "global batch size; a comma-separated list runs a sweep", "64", false,
               absl::StrCat("integers in [1, ", kMaxBatchSize, "], comma-separated")},
              [](auto& n, auto& v, TrainConfig& c) {
                ASSIGN_OR_RETURN(c.batch_sizes, ParseBatchSizes(n, v));
                return absl::OkStatus();
              }},
      Named("optimizer", "adam | sgd (with momentum)", "adam",
            [](auto& n, auto& v, TrainConfig& c) { c.optimizer.kind = v; return OneOf(n, v, {"adam", "sgd"}); }),
      RealSetting({"lr", "learning rate of both networks (pix2pix: 0.0002 unless given)", "0.0001"}, {1e-12, 10},
                  [](TrainConfig& c, double v) { c.optimizer.lr = static_cast<float>(v); }),
      RealSetting({"beta1", "Adam beta1 (0.5 is DCGAN practice; the TF tutorial uses 0.9)", "0.5"}, {0, 0.9999},
                  [](TrainConfig& c, double v) { c.optimizer.beta1 = static_cast<float>(v); }),
      RealSetting({"beta2", "Adam beta2", "0.999"}, {0, 0.999999},
                  [](TrainConfig& c, double v) { c.optimizer.beta2 = static_cast<float>(v); }),
      RealSetting({"adam-eps", "Adam epsilon (Keras default)", "1e-07"}, {1e-12, 1},
                  [](TrainConfig& c, double v) { c.optimizer.eps = static_cast<float>(v); }),
      RealSetting({"momentum", "SGD momentum", "0.9"}, {0, 0.9999},
                  [](TrainConfig& c, double v) { c.optimizer.momentum = static_cast<float>(v); }),
      Named("lr-scaling", "how --lr follows the global batch: none | linear (x batch/base) | sqrt (x "
            "sqrt(batch/base)), relative to --base-batch-size; both networks", "none",
            [](auto& n, auto& v, TrainConfig& c) {
              RETURN_IF_ERROR(OneOf(n, v, LrScalingNames()));
              ASSIGN_OR_RETURN(c.rate_rule.scaling, ParseLrScaling(v));
              return absl::OkStatus();
            }),
      IntSetting({"base-batch-size", "the global batch --lr was tuned for (what --lr-scaling scales from)", "64"},
                 kBatchSize, [](TrainConfig& c, int64_t v) { c.rate_rule.base_batch_size = v; }),
      IntSetting({"warmup-steps", "ramp the learning rate linearly over the first N optimizer steps of each batch "
                  "size, from --warmup-start x the rate (0: no warm-up)", "0"},
                 kWarmupSteps, [](TrainConfig& c, int64_t v) { c.rate_rule.warmup_steps = v; }),
      RealSetting({"warmup-start", "the warm-up's first rate as a fraction of the (scaled) rate, in (0, 1]", "0.1"},
                  {0, 1, /*lo_open=*/true}, [](TrainConfig& c, double v) { c.rate_rule.warmup_start = v; }),
      RealSetting({"d-lr-ratio", "the discriminator's learning rate as a multiple of the generator's, after "
                   "--lr-scaling and in the same warm-up (two time-scale rates, TTUR; 1: the same rate)", "1"},
                  {0, 100, /*lo_open=*/true}, [](TrainConfig& c, double v) { c.rate_rule.d_ratio = v; }),
      RealSetting({"g-ema", "keep an exponential moving average of the generator's weights with this decay per "
                   "step (e.g. 0.999; 0: none); the epochs' samples, quality scores and checkpoints' model "
                   "(generate, export, rollout) are the average's", "0"},
                  {0, 1, /*lo_open=*/false, /*hi_open=*/true}, [](TrainConfig& c, double v) { c.g_ema = v; }),
      Named("augment", "differentiable augmentation of every image the discriminator sees, real and generated "
            "(DiffAugment; small datasets): off | a comma list of color, translation, cutout (run in that order); "
            "unconditional models on the CPU", "off",
            [](auto& n, auto& v, TrainConfig& c) {
              ASSIGN_OR_RETURN(c.augment, ParseAugmentPolicy(absl::StrCat("--", n), v));
              return absl::OkStatus();
            }),
      RealSetting({"dropout", "discriminator dropout rate (the 28x28 DCGAN; the image DCGAN has none)", "0.3"}, {0, 0.95},
                  [](TrainConfig& c, double v) { c.dcgan.dropout = static_cast<float>(v); }),
      Setting{{"image-size", "pix2pix: side of the square training crops, a power of two >= 32 (U-Net depth log2 of "
               "it, at most 8); images: the side the images are packed at and the DCGAN's, 32, 64 or 128 "
               "(default 64, or a packed set's own)", "256", false,
               absl::StrCat("a power of two in [", kImageSize.lo, ", ", kImageSize.hi, "]")},
              [](auto& n, auto& v, TrainConfig& c) {
                ASSIGN_OR_RETURN(c.pix2pix.image_size, ParseInt(n, v, 1, kImageSize.hi));
                c.image_dcgan.image_size = c.pix2pix.image_size;
                const std::string problem = Pix2pixImageSizeProblem(c.pix2pix.image_size);
                return problem.empty() ? absl::OkStatus() : Bad(n, v, problem);
              }},
      IntSetting({"ngf", "pix2pix: generator filters in the first U-Net block (later blocks double up to 8x); the "
                  "image DCGAN: in G's last block (earlier blocks double up to 8x)", "64"},
                 kFilters, [](TrainConfig& c, int64_t v) { c.pix2pix.ngf = c.image_dcgan.ngf = v; }),
      IntSetting({"ndf", "pix2pix: discriminator filters in the first PatchGAN block (later blocks double up to 8x); "
                  "the image DCGAN: in D's first block", "64"},
                 kFilters, [](TrainConfig& c, int64_t v) { c.pix2pix.ndf = c.image_dcgan.ndf = v; }),
      IntSetting({"channels", "images: colour channels the images are packed with and the DCGAN takes: 1 (grey) | 3 "
                  "(RGB); 2 and 4 are sets packed with their alpha kept (make-dataset --alpha keep)", "3"},
                 kChannels, [](TrainConfig& c, int64_t v) { c.image_dcgan.channels = v; }),
      Switch("mirror", "images: each epoch also shows every image flipped left to right (twice the images)",
             [](TrainConfig& c) -> bool& { return c.mirror; }),
      Named("norm", "pix2pix: normalisation of both networks: batch | instance", "batch",
            [](auto& n, auto& v, TrainConfig& c) {
              c.pix2pix.norm = v == "instance" ? NormKind::kInstance : NormKind::kBatch;
              return OneOf(n, v, {"batch", "instance"});
            }),
      RealSetting({"l1-weight", "pix2pix: weight of the L1 term in the generator loss", "100"}, {0, 1e6},
                  [](TrainConfig& c, double v) { c.pix2pix.l1_weight = static_cast<float>(v); }),
      IntSetting({"horizon", "pix2pix on flow data: the target is this many frames after the condition", "1"}, kHorizon,
                 [](TrainConfig& c, int64_t v) { c.pix2pix.horizon = v; }),
      Named("predict", "pix2pix: what the generator's network outputs: delta (the change, added to the input frame) | "
            "frame (the next frame itself)", "delta",
            [](auto& n, auto& v, TrainConfig& c) {
              c.pix2pix.predict = v == "frame" ? NextFramePrediction::kFrame : NextFramePrediction::kDelta;
              return OneOf(n, v, {"delta", "frame"});
            }),
      RealSetting({"input-noise", "pix2pix on flow data: standard deviation of Gaussian noise added to the input frame "
                   "of each training pair (normalised units), so the model learns to correct the small errors a "
                   "rollout feeds back; 0: none", "0"},
                  {0, 1}, [](TrainConfig& c, double v) { c.pix2pix.input_noise = static_cast<float>(v); }),
      IntSetting({"unroll", "pix2pix on flow data: train through this many autoregressive steps per sample (the "
                  "generator fed its own predictions; windows of M + 1 frames; memory grows with M); 1: one step",
                  "1"},
                 kUnrollSteps, [](TrainConfig& c, int64_t v) { c.pix2pix.unroll.steps = v; }),
      Named("unroll-loss", "unrolled training: which predictions carry the loss: every (the mean over the steps) | "
            "last", "every",
            [](auto& n, auto& v, TrainConfig& c) {
              c.pix2pix.unroll.loss = v == "last" ? UnrollLoss::kLast : UnrollLoss::kEvery;
              return OneOf(n, v, {"every", "last"});
            }),
      Switch("pushforward", "unrolled training: gradients only through the last step (the earlier predictions are "
             "inputs, not part of the graph); the loss is the last step's",
             [](TrainConfig& c) -> bool& { return c.pix2pix.unroll.pushforward; }),
      IntSetting({"unroll-curriculum", "unrolled training: start each batch size at 1 step and add one every this "
                  "many epochs up to --unroll; 0: --unroll from the first epoch", "0"},
                 kCurriculumEpochs, [](TrainConfig& c, int64_t v) { c.pix2pix.unroll.curriculum_epochs = v; }),
      Named("init", "weight initialisation: glorot (Keras) | normal (N(0, 0.02); the pix2pix default)", "glorot",
            [](auto& n, auto& v, TrainConfig& c) {
              c.init = v == "normal" ? InitScheme::kNormal002 : InitScheme::kGlorotUniform;
              return OneOf(n, v, {"glorot", "normal"});
            }),
      Named("init-from",
            "start from the weights in safetensors files instead of drawing them: FILE[,FILE], each one network "
            "(generator or discriminator) as its PyTorch twin's state_dict, as gantry-worker export writes it "
            "(docs/export.md); a network no file names is drawn as --init says", "",
            [](auto& n, auto& v, TrainConfig& c) {
              c.init_from = v;
              if (v.empty()) return absl::InvalidArgumentError(absl::StrCat("--", n, ": give one or two files"));
              return absl::OkStatus();
            }),
      Named("kernels", "compute kernels on the CPU: onednn (fast) | eigen (the portable reference)",
            "onednn where the worker has it, else eigen",
            [](auto& n, auto& v, TrainConfig& c) {
              c.kernels = v;
              // Only the name here: whether a worker was built with it is that worker's check.
              return OneOf(n, v, KernelNames());
            }),
      Named("device", "where the model trains: cpu | cuda (CUDA builds, one GPU per rank; --kernels applies to cpu)",
            "cpu",
            [](auto& n, auto& v, TrainConfig& c) {
              c.device = v;
              // Only the name here: this may be the coordinator's machine, not the workers'
              // (the job's ranks check their GPUs when they open it, OpenTrainingDevice).
              return OneOf(n, v, DeviceNames());
            }),
      Setting{{"seed", "seed of weights, shuffling, noise and dropout", "1", false, kSeedRangeText}, SetSeed},
      IntSetting({"max-steps", "stop each batch size after this many steps (0: no limit)", "0"}, kStepCount,
                 [](TrainConfig& c, int64_t v) { c.max_steps = v; }),
      IntSetting({"limit-images", "train on the first N images only (0: all)", "0"}, kImages,
                 [](TrainConfig& c, int64_t v) { c.limit_images = v; }),
      RealSetting({"progress-seconds", "seconds between progress lines", "5"}, {0, 86400},
                  [](TrainConfig& c, double v) { c.progress_seconds = v; }),
      Named("out", "run folder to create (default: runs/<date>-<time>)", "",
            [](auto&, auto& v, TrainConfig& c) { c.out = v; return absl::OkStatus(); }),
      IntSetting({"checkpoint-every-steps", "write a checkpoint every K steps, and at every epoch end (0: at epoch "
                  "ends only)", "500"},
                 kStepCount, [](TrainConfig& c, int64_t v) { c.checkpoint_every_steps = v; }),
      IntSetting({"keep-checkpoints", "keep the newest N checkpoints in RUN/checkpoints", "3"}, kKeepCheckpoints,
                 [](TrainConfig& c, int64_t v) { c.keep_checkpoints = v; }),
      Switch("tensorboard", "also write TensorBoard event files (scalars per step and epoch, the sample grid per "
             "epoch) under RUN/tensorboard/", [](TrainConfig& c) -> bool& { return c.tensorboard; }),
      RealSetting({"watts-per-core", "power of one busy CPU core, for the energy estimate where neither NVML (GPU "
                   "runs) nor RAPL is readable", "6"},
                  {0, 1000, /*lo_open=*/true}, [](TrainConfig& c, double v) { c.watts_per_core = v; }),
      Named("quality", "score each epoch's samples with the dataset's judge (gantry-worker train-judge): auto (when "
            "one is cached) | off | fast (64 samples) | full (1024 samples)", "auto",
            [](auto& n, auto& v, TrainConfig& c) {
              c.quality = v;
              return OneOf(n, v, {"auto", "off", "fast", "full"});
            }),
      RealSetting({"target-fd", "time to quality: per batch size, the wall time, samples and steps at which the "
                   "quality score's Frechet distance first reaches this value (timing.md, gantry report; needs "
                   "--quality); 0: none", "0"},
                  {0, 1e6}, [](TrainConfig& c, double v) { c.target.fd = v; }),
      RealSetting({"target-rel-l2", "time to quality on flow data: as --target-fd, for the held-out relative L2 error "
                   "of the next frame (epochs.csv val_rel_l2); 0: none", "0"},
                  {0, 1e6}, [](TrainConfig& c, double v) { c.target.rel_l2 = v; }),
      Switch("stop-at-target", "end each batch size at the first epoch that reaches --target-fd / --target-rel-l2",
             [](TrainConfig& c) -> bool& { return c.target.stop; }),
      Switch("sync-bn", "sum BatchNorm statistics across ranks", [](TrainConfig& c) -> bool& { return c.sync_bn; }),
      Switch("rebalance", "re-split the global batch by measured rank speed at epoch ends",
             [](TrainConfig& c) -> bool& { return c.rebalance; }),
      RealSetting({"straggler-factor", "flag a rank whose median compute time exceeds this times the group's", "1.3"},
                  {1.0001, 1000}, [](TrainConfig& c, double v) { c.straggler.factor = v; }),
      IntSetting({"straggler-window", "steps per straggler median", "20"}, kStragglerWindow,
                 [](TrainConfig& c, int64_t v) { c.straggler.window = static_cast<int>(v); }),
      RealSetting({"comm-timeout", "seconds any collective may wait for the other ranks", "120"}, {0.01, 86400},
                  [](TrainConfig& c, double v) { c.comm_timeout_seconds = v; }),
      Named("overlap", "all-reduce each bucket of gradients while backward still computes: on | off | auto "
            "(auto: whichever is faster over this run's first 14 steps; the results are the same bit for bit)", "auto",
            [](auto& n, auto& v, TrainConfig& c) {
              c.overlap = v == "on" ? OverlapMode::kOn : v == "off" ? OverlapMode::kOff : OverlapMode::kAuto;
              return OneOf(n, v, {"on", "off", "auto"});
            }),
      RealSetting({"bucket-mb", "megabytes of fp32 gradients per overlapped all-reduce (the first at most 1)", "4"},
                  {0.001, 4096}, [](TrainConfig& c, double v) { c.bucket_mb = v; }),
      IntSetting({"debug-slow-rank", "make this rank slow on purpose, to show straggler handling (-1: none)", "-1"},
                 kSlowRank, [](TrainConfig& c, int64_t v) { c.debug_slow_rank = static_cast<int>(v); }),
      RealSetting({"debug-slow-ms", "extra sleep per step on the slow rank", "0"}, {0, 600000},
                  [](TrainConfig& c, double v) { c.debug_slow_ms = v; }),
      RealSetting({"debug-slow-factor", "stretch the slow rank's compute time this many times (1: off)", "1"},
                  {1, 100}, [](TrainConfig& c, double v) { c.debug_slow_factor = v; }),
      IntSetting({"debug-crash-after-step",
                  "rank 0 kills its own process (SIGKILL, as kill -9 would) right after this step of the run and a "
                  "mid-epoch checkpoint due there, in a run started afresh (not resumed); to test resuming from a "
                  "crash (0: never)", "0"},
                 kStepCount, [](TrainConfig& c, int64_t v) { c.debug_crash_after_step = v; }),
  };
  return *settings;
}

const std::vector<Setting>& Settings() {
  static const auto* settings = [] {
    auto* all = new std::vector<Setting>;
    const std::vector<Setting>& core = CoreSettings();
    // Precision after the model's own settings (up to --out), debug switches last.
    const auto data_parallel =
        std::find_if(core.begin(), core.end(), [](const Setting& s) { return s.info.name == "sync-bn"; });
    all->insert(all->end(), core.begin(), data_parallel);
    all->insert(all->end(), PrecisionSettings().begin(), PrecisionSettings().end());
    all->insert(all->end(), data_parallel, core.end());
    all->insert(all->end(), InjectInfSettings().begin(), InjectInfSettings().end());
    return all;
  }();
  return *settings;
}

const Setting* FindSetting(const std::string& name) {
  for (const Setting& s : Settings()) {
    if (s.info.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

const std::vector<SettingInfo>& TrainSettings() {
  static const auto* infos = [] {
    auto* v = new std::vector<SettingInfo>;
    for (const Setting& s : Settings()) v->push_back(s.info);
    return v;
  }();
  return *infos;
}

const SettingInfo* FindSettingInfo(const std::string& name) {
  const Setting* s = FindSetting(name);
  return s == nullptr ? nullptr : &s->info;
}

namespace {

// The target must be one the run scores: the judge's distance for images, the held-out
// error for flow fields.
absl::Status CheckQualityTarget(const TrainConfig& c) {
  const QualityTarget& t = c.target;
  if (t.stop && !t.active()) {
    return absl::InvalidArgumentError("--stop-at-target needs a target: --target-fd (images) or --target-rel-l2 (flow)");
  }
  const bool flow = c.dataset == "flow";
  if (t.fd > 0 && flow) {
    return absl::InvalidArgumentError(
        "--target-fd scores generated images; flow runs are scored by their held-out error: use --target-rel-l2");
  }
  if (t.rel_l2 > 0 && !flow) {
    return absl::InvalidArgumentError(
        "--target-rel-l2 is the held-out error of flow runs (--dataset flow); image runs use --target-fd");
  }
  if (t.fd > 0 && c.quality == "off") {
    return absl::InvalidArgumentError("--target-fd needs the quality score, but --quality is off: use --quality auto, "
                                      "fast or full (and a judge: gantry-worker train-judge)");
  }
  return absl::OkStatus();
}

// What the image DCGAN cannot take, by name.
absl::Status CheckImageDcganSettings(const RawSettings& settings, const TrainConfig& c) {
  if (const std::string problem = ImageDcganImageSizeProblem(c.image_dcgan.image_size); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--image-size ", c.image_dcgan.image_size, ": ", problem));
  }
  if (settings.contains("dropout")) {
    return absl::InvalidArgumentError("--dropout: the image DCGAN's discriminator has no dropout (as the DCGAN "
                                      "paper's); leave --dropout out with --dataset images");
  }
  return absl::OkStatus();
}

// Settings only image runs use, refused elsewhere rather than silently ignored.
absl::Status CheckImageOnlySettings(const RawSettings& settings, const TrainConfig& c) {
  for (const char* name : {"channels", "mirror"}) {
    if (settings.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " applies to --dataset images (your own images), not ",
                                                     "--dataset ", c.dataset, "; leave it out"));
    }
  }
  return absl::OkStatus();
}

// Unrolled training is for the next-frame model on flow fields, and its companions need it.
absl::Status CheckUnroll(const RawSettings& settings, const TrainConfig& c) {
  const UnrollConfig& u = c.pix2pix.unroll;
  // The companions asked for (a switch given as false asks for nothing), in the order refused.
  std::vector<const char*> companions;
  if (settings.contains("unroll-loss")) companions.push_back("unroll-loss");
  if (u.pushforward) companions.push_back("pushforward");
  if (settings.contains("unroll-curriculum")) companions.push_back("unroll-curriculum");
  if (!settings.contains("unroll") && companions.empty()) return absl::OkStatus();
  if (c.model != "pix2pix" || c.dataset != "flow") {
    return absl::InvalidArgumentError(absl::StrCat("--unroll and its companions train the next-frame model on flow "
                                                   "fields (--model pix2pix --dataset flow), not --model ", c.model,
                                                   " --dataset ", c.dataset, "; leave them out"));
  }
  if (u.steps == 1 && !companions.empty()) {
    const char* name = companions.front();
    return absl::InvalidArgumentError(absl::StrCat("--", name, " applies to unrolled training; give --unroll M "
                                                   "with M >= 2, or leave --", name, " out"));
  }
  if (u.pushforward && settings.contains("unroll-loss") && u.loss == UnrollLoss::kEvery) {
    return absl::InvalidArgumentError("--pushforward trains on the last step's loss only; leave --unroll-loss out "
                                      "or set it to last");
  }
  return absl::OkStatus();
}

// --augment transforms D's image inputs in the unconditional GAN step, on the CPU.
absl::Status CheckAugment(const TrainConfig& c) {
  if (!c.augment.active()) return absl::OkStatus();
  const std::string policy = AugmentPolicyName(c.augment);
  if (c.model == "pix2pix") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--augment ", policy, " applies to the unconditional GAN step; pix2pix's discriminator judges (condition, "
        "target) pairs, which one transform would have to move alike: use --augment off with --model pix2pix"));
  }
  if (c.device == "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--augment ", policy, " runs on the CPU only (the CUDA backend has no augmentation kernels): use --device "
        "cpu, or --augment off on a GPU"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsDebugSetting(const std::string& name) { return absl::StartsWith(name, "debug-"); }

absl::Status CheckSettingValue(const std::string& name, const std::string& value) {
  const Setting* s = FindSetting(name);
  if (s == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown setting '", name, "'"));
  TrainConfig scratch;
  return s->apply(name, value, scratch);
}

absl::StatusOr<TrainConfig> ResolveTrainConfig(const RawSettings& settings) {
  TrainConfig config;
  for (const auto& [name, value] : settings) {
    const Setting* s = FindSetting(name);
    if (s == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown setting '", name, "'"));
    RETURN_IF_ERROR(s->apply(name, value, config));
  }
  // Pix2Pix's own defaults where the run leaves them open (the paper, the TF tutorial
  // and junyanz agree): Adam 2e-4 and N(0, 0.02) weights. And the generator predicts the
  // change of the frame (--predict delta), which measured clearly better on flow data
  // than the whole frame (docs/flow.md); Pix2pixConfig itself keeps the sources'
  // frame-predicting network.
  if (config.model == "pix2pix") {
    if (!settings.contains("lr")) config.optimizer.lr = 2e-4f;
    if (!settings.contains("init")) config.init = InitScheme::kNormal002;
    if (!settings.contains("predict")) config.pix2pix.predict = NextFramePrediction::kDelta;
  }
  // The image DCGAN's starting point is the DCGAN paper's (and examples/dcgan's): Adam
  // 2e-4 with beta1 0.5 (the default already), N(0, 0.02) weights, 64 px.
  if (UsesImageDcgan(config)) {
    if (!settings.contains("lr")) config.optimizer.lr = 2e-4f;
    if (!settings.contains("init")) config.init = InitScheme::kNormal002;
    if (!settings.contains("image-size")) config.image_dcgan.image_size = 64;
    RETURN_IF_ERROR(CheckImageDcganSettings(settings, config));
  } else {
    RETURN_IF_ERROR(CheckImageOnlySettings(settings, config));
  }
  RETURN_IF_ERROR(FinishPrecisionSettings(settings, config.mixed));
  // Each network's rate after scaling, at every batch size (the float the optimizer takes).
  RETURN_IF_ERROR(CheckEffectiveRates(config.optimizer.lr, config.rate_rule, config.batch_sizes));
  RETURN_IF_ERROR(CheckQualityTarget(config));
  RETURN_IF_ERROR(CheckAugment(config));
  RETURN_IF_ERROR(CheckUnroll(settings, config));
  // The tracker's own rule, so what it would CHECK is refused here by name.
  RETURN_IF_ERROR(ValidateStragglerConfig(config.straggler));
  return config;
}

bool UsesImageDcgan(const TrainConfig& config) { return config.model == "dcgan" && config.dataset == "images"; }

std::string EffectiveDataDir(const TrainConfig& config) {
  return config.data_dir.empty() ? DefaultDataDir(config.dataset) : config.data_dir;
}

}  // namespace gantry
