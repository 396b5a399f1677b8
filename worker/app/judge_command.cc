#include "worker/app/judge_command.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "common/exit_codes.h"
#include "runspec/datasets.h"
#include "spdlog/spdlog.h"
#include "worker/app/logging.h"
#include "worker/data/labelled_split.h"
#include "worker/data/mnist_dataset.h"
#include "worker/data/packed_images.h"
#include "worker/eval/judge.h"
#include "worker/eval/judge_store.h"
#include "worker/tensor/backend_registry.h"

namespace gantry {
namespace {

// What a judge of this architecture reaches after two epochs is well above these (about
// 0.98 on MNIST and 0.88 on Fashion-MNIST); below them something went wrong (wrong or
// damaged data), and such a judge would score samples badly.
double DefaultMinAccuracy(const std::string& dataset) {
  if (dataset == "images") return 0;  // your own classes: no accuracy is known in advance (a warning below 0.5)
  return dataset == "mnist" ? 0.95 : 0.85;
}

// A tenth of a packed set's images are the judge's test images, chosen by the seed.
constexpr double kImagesTestFraction = 0.1;

int Fail(const absl::Status& s, int code) {
  std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
  return code;
}

}  // namespace

JudgeCommand::JudgeCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "train-judge", "train once, and cache, the classifier that scores each epoch's samples (--quality)");
  command_->add_option("--dataset", dataset_, "mnist | fashion-mnist | images [default: fashion-mnist]")
      ->check(CLI::IsMember({"mnist", "fashion-mnist", "images"}));
  command_->add_option("--data-dir", data_dir_,
                       "folder with the train and t10k IDX files [default: the dataset's Debian location]; images: "
                       "a packed image set with class folders (gantry-worker make-dataset)");
  numbers_ = std::make_unique<NumberFlags>(command_);
  numbers_->Int("--epochs", &epochs_, {1, 100}, "training epochs [default: 2]");
  numbers_->Seed("--seed", &seed_, "seed of the weights and the shuffling [default: 1]");
  numbers_->Real("--min-accuracy", &min_accuracy_, {0, 1},
                 "refuse to cache a judge below this test accuracy [default: 0.95 mnist, 0.85 fashion-mnist]");
  command_->add_flag("--retrain", retrain_, "train a new judge even when one is cached");
}

int JudgeCommand::Run() {
  SetUpWorkerLogging(0);
  if (absl::Status s = numbers_->Parse(); !s.ok()) return Fail(s, kExitUsage);
  const std::string dir = data_dir_.empty() ? DefaultDataDir(dataset_) : data_dir_;
  if (dataset_ == "images") return RunImages(dir);
  if (!retrain_) {
    auto found = FindJudge(dataset_, dir, JudgeShape{});  // MNIST-format data: 1x28x28, 10 classes
    if (found.ok()) {
      std::printf("judge of %s already cached: %s (test accuracy %.4f); --retrain to train a new one\n",
                  dataset_.c_str(), found->second.c_str(), found->first->test_accuracy);
      return kExitOk;
    }
    if (!absl::IsNotFound(found.status())) spdlog::warn("{}; training a new one", std::string(found.status().message()));
  }
  const ImageRequirement need{.channels = 1, .height = kJudgeSide, .width = kJudgeSide, .needed_by = "the judge"};
  absl::StatusOr<ImageDataset> train = LoadMnistDir(dir, /*train=*/true, &need);
  if (!train.ok()) return Fail(train.status(), kExitUsage);
  absl::StatusOr<ImageDataset> test = LoadMnistDir(dir, /*train=*/false, &need);
  if (!test.ok()) return Fail(test.status(), kExitUsage);
  JudgeOptions options;
  options.epochs = epochs_;
  options.seed = seed_;
  options.min_accuracy = min_accuracy_ >= 0 ? min_accuracy_ : DefaultMinAccuracy(dataset_);
  Backend& backend = *FindBackend(DefaultBackendName());
  spdlog::info("training the {} judge on {} images ({} test) with {} kernels, {} epochs, seed {}", dataset_,
               train->count, test->count, backend.name(), options.epochs, options.seed);
  absl::StatusOr<std::unique_ptr<Judge>> judge = TrainJudge(backend, *train, *test, dataset_, options);
  if (!judge.ok()) return Fail(judge.status(), kExitUsage);
  std::printf("judge of %s: test accuracy %.4f on %lld images\n", dataset_.c_str(), (*judge)->test_accuracy,
              static_cast<long long>(test->count));
  if ((*judge)->test_accuracy < options.min_accuracy) {
    std::fprintf(stderr,
                 "error: test accuracy %.4f is below %.2f: not cached (check the data; --min-accuracy to accept it)\n",
                 (*judge)->test_accuracy, options.min_accuracy);
    return kExitFailure;
  }
  absl::StatusOr<std::string> path = SaveJudge(**judge, dir);
  if (!path.ok()) return Fail(path.status(), kExitFailure);
  std::printf("cached: %s\n", path->c_str());
  return kExitOk;
}

int JudgeCommand::RunImages(const std::string& file) {
  if (file.empty()) {
    return Fail(absl::InvalidArgumentError("--dataset images needs --data-dir: a packed image set with class "
                                           "folders (gantry-worker make-dataset --from DIR --out FILE)"),
                kExitUsage);
  }
  absl::StatusOr<std::unique_ptr<PackedImages>> set = PackedImages::Open(file);
  if (!set.ok()) return Fail(set.status(), kExitUsage);
  const PackedImagesInfo& info = (*set)->info();
  const JudgeShape shape{.channels = info.channels, .side = info.image_size,
                         .classes = static_cast<int64_t>(info.class_names.size())};
  if (!retrain_ && !info.class_names.empty()) {
    auto found = FindJudge(dataset_, file, shape);
    if (found.ok()) {
      std::printf("judge of %s already cached: %s (test accuracy %.4f); --retrain to train a new one\n", file.c_str(),
                  found->second.c_str(), found->first->test_accuracy);
      return kExitOk;
    }
  }
  absl::StatusOr<LabelledSplit> split = SplitLabelledImages(**set, kImagesTestFraction, seed_);
  if (!split.ok()) return Fail(split.status(), kExitUsage);
  JudgeOptions options;
  options.epochs = epochs_;
  options.seed = seed_;
  options.classes = shape.classes;
  options.min_accuracy = min_accuracy_ >= 0 ? min_accuracy_ : DefaultMinAccuracy(dataset_);
  Backend& backend = *FindBackend(DefaultBackendName());
  spdlog::info("training a judge of {} ({} classes of {}x{}x{} images) on {} images ({} test), {} epochs, seed {}",
               file, shape.classes, shape.channels, shape.side, shape.side, split->train.count, split->test.count,
               options.epochs, options.seed);
  absl::StatusOr<std::unique_ptr<Judge>> judge = TrainJudge(backend, split->train, split->test, dataset_, options);
  if (!judge.ok()) return Fail(judge.status(), kExitUsage);
  std::printf("judge of %s: test accuracy %.4f on %lld images\n", file.c_str(), (*judge)->test_accuracy,
              static_cast<long long>(split->test.count));
  if ((*judge)->test_accuracy < options.min_accuracy) {
    std::fprintf(stderr, "error: test accuracy %.4f is below %.2f: not cached\n", (*judge)->test_accuracy,
                 options.min_accuracy);
    return kExitFailure;
  }
  if ((*judge)->test_accuracy < 0.5) {
    spdlog::warn("the judge classifies only {:.0f} % of the test images right: its scores will say little (more "
                 "epochs, more images per class, or the label-free score, which needs no judge)",
                 100 * (*judge)->test_accuracy);
  }
  absl::StatusOr<std::string> path = SaveJudge(**judge, file);
  if (!path.ok()) return Fail(path.status(), kExitFailure);
  std::printf("cached: %s (runs with --data-dir %s score with it)\n", path->c_str(), file.c_str());
  return kExitOk;
}

}  // namespace gantry
