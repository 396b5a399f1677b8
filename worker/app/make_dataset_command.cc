#include "worker/app/make_dataset_command.h"

#include <csignal>
#include <cstdio>

#include "common/exit_codes.h"
#include "common/printable_text.h"
#include "worker/app/logging.h"
#include "worker/pool/stop_signals.h"

namespace gantry {
namespace {

constexpr IntRange kImageSizeRange{kMinPackedImageSize, kMaxPackedImageSize};
constexpr IntRange kChannelsRange{1, 3};
constexpr IntRange kMaxPixelsRange{kMinImageSide * kMinImageSide, int64_t{1} << 34};
constexpr RealRange kProgressRange{0.1, 86400};

int ExitCodeFor(const absl::Status& status) {
  if (absl::IsCancelled(status)) return ExitCodeForSignal(StopSignal() != 0 ? StopSignal() : SIGINT);
  if (absl::IsInvalidArgument(status) || absl::IsAlreadyExists(status) || absl::IsNotFound(status) ||
      absl::IsPermissionDenied(status)) {
    return kExitUsage;
  }
  return kExitFailure;
}

}  // namespace

MakeDatasetCommand::MakeDatasetCommand(CLI::App& app) {
  command_ = app.add_subcommand("make-dataset",
                                "pack a folder of PNG, JPEG and WebP images into one packed image set for training");
  numbers_ = std::make_unique<NumberFlags>(command_);
  PackRequest& r = request_;
  NumberFlags& n = *numbers_;
  command_->add_option("--from", r.from, "the folder of images, read recursively (links followed)")->required();
  command_->add_option("--out", r.out, "the packed file to write; must not exist (never written over)")->required();
  n.Int("--image-size", &r.image_size, kImageSizeRange, "each image becomes N x N (required)");
  n.Int("--channels", &r.channels, kChannelsRange, "1 (luma, BT.601 weights) or 3 (RGB; gray replicated) [default: 3]");
  command_->add_option("--fit", r.fit,
                       "crop (short side to N, centre crop), pad (long side to N, centred) or stretch "
                       "[default: crop]");
  command_->add_option("--alpha", r.alpha,
                       "white or black (composite transparent images over it, and pad with it) or keep (store "
                       "alpha as an extra channel) [default: white]");
  command_->add_option("--labels", r.labels,
                       "folders (the first-level sub-folder names the class) or none [default: folders]");
  command_->add_flag("--strict", r.strict, "any skipped file fails the command (exit 2) and nothing is written");
  n.Int("--max-pixels", &r.max_pixels, kMaxPixelsRange,
        "images with more pixels (width x height, read from the header) are skipped as decompression bombs "
        "before decoding [default: 67108864, 64 Mi]");
  n.Real("--progress-seconds", &progress_seconds_, kProgressRange, "seconds between progress lines [default: 5]");
  command_->footer(
      "Files are skipped, and listed with the reason at the end, when they are: not an image, unsupported, "
      "truncated, corrupt, too small (a side under 8 pixels), a decompression bomb, too large a file, unreadable, "
      "a link loop, not a regular file, or (with --labels folders) not in a class folder.\n"
      "Exit codes: 0 written; 2 bad flags, a --from that is not a folder, an --out that exists or cannot be created, "
      "no image to pack, or --strict with a file skipped (nothing written); 1 a failure while writing (e.g. the disk "
      "is full); 130/143 "
      "stopped by SIGINT/SIGTERM. The temporary file (--out's path + .tmp.PID.N) is removed in every case.");
}

int MakeDatasetCommand::Run() {
  SetUpWorkerLogging(0);
  if (absl::Status s = numbers_->Parse(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  if (command_->get_option("--image-size")->count() == 0) {
    std::fprintf(stderr, "error: --image-size is required (each image becomes N x N, %lld to %lld)\n",
                 static_cast<long long>(kMinPackedImageSize), static_cast<long long>(kMaxPackedImageSize));
    return kExitUsage;
  }
  // A write to a file larger than the process may write (ulimit -f) fails with EFBIG
  // instead of killing the process, so the temporary file is removed.
  std::signal(SIGXFSZ, SIG_IGN);
  InstallStopSignalHandlers();
  request_.stop_requested = [] { return StopSignal() != 0; };
  absl::StatusOr<PackReport> report = PackImageFolder(request_, progress_seconds_);
  if (!report.ok()) {
    const int code = ExitCodeFor(report.status());
    std::fprintf(stderr, "error: %s%s\n", EscapeForTerminal(report.status().message()).c_str(),
                 code == kExitFailure ? "; nothing written (the temporary file is removed)" : "");
    return code;
  }
  return kExitOk;
}

}  // namespace gantry
