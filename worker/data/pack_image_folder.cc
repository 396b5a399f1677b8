#include "worker/data/pack_image_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/data/image_folder_scan.h"
#include "worker/data/packed_images_writer.h"
#include "worker/formats/image_decode.h"
#include "worker/formats/image_fit.h"
#include "worker/formats/image_resample.h"

namespace gantry {
namespace {

using SteadyClock = std::chrono::steady_clock;

// --max-pixels' range: at least one image of the least size, at most 2^34 (16 G pixels,
// far above any real image), so that the byte limits below cannot overflow.
constexpr int64_t kMaxMaxPixels = int64_t{1} << 34;

struct PackSettings {
  ImageFitSettings fit;
  bool labelled = true;
  int64_t max_pixels = 0;
  // A file larger than any image within max_pixels could be (8 bytes a pixel: 16-bit
  // RGBA, plus 64 MiB of metadata) is not read.
  int64_t max_file_bytes = 0;
};

absl::StatusOr<PackSettings> CheckRequest(const PackRequest& request) {
  PackSettings s;
  s.fit.size = request.image_size;
  if (request.channels != 1 && request.channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat("--channels ", request.channels, ": must be 1 (luma) or 3 (RGB)"));
  }
  s.fit.channels = static_cast<int>(request.channels);
  if (request.image_size < kMinFitSize || request.image_size > kMaxFitSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("--image-size ", request.image_size, ": must be ", kMinFitSize, " to ", kMaxFitSize));
  }
  absl::StatusOr<ImageFit> fit = ParseImageFit(request.fit);
  if (!fit.ok()) return absl::InvalidArgumentError(absl::StrCat("--", fit.status().message()));
  s.fit.fit = *fit;
  absl::StatusOr<AlphaHandling> alpha = ParseAlphaHandling(request.alpha);
  if (!alpha.ok()) return absl::InvalidArgumentError(absl::StrCat("--", alpha.status().message()));
  s.fit.alpha = *alpha;
  if (request.labels != "folders" && request.labels != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--labels '", request.labels, "': use folders (a class per first-level sub-folder) or none"));
  }
  s.labelled = request.labels == "folders";
  if (request.max_pixels < kMinImageSide * kMinImageSide || request.max_pixels > kMaxMaxPixels) {
    return absl::InvalidArgumentError(absl::StrCat("--max-pixels ", request.max_pixels, ": must be ",
                                                   kMinImageSide * kMinImageSide, " to ", kMaxMaxPixels));
  }
  s.max_pixels = request.max_pixels;
  s.max_file_bytes = request.max_pixels * 8 + (int64_t{64} << 20);
  if (request.from.empty()) return absl::InvalidArgumentError("--from: give the folder of images to pack");
  return s;
}

absl::Status CheckFromIsAFolder(const std::string& from) {
  struct stat st {};
  if (::stat(from.c_str(), &st) != 0) {
    const int error = errno;
    const std::string what = absl::StrCat("--from ", from, ": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(what) : absl::InvalidArgumentError(what);
  }
  if (!S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat("--from ", from, ": not a folder"));
  return absl::OkStatus();
}

// The file's bytes into `bytes` (reused from file to file); the reason and detail when
// it cannot be read.
struct ReadFailure {
  const char* reason = nullptr;
  std::string detail;
};
ReadFailure ReadWholeFile(const std::string& path, int64_t max_bytes, std::vector<uint8_t>* bytes) {
  // O_NONBLOCK: something swapped in for the file since the walk saw it (a FIFO) is
  // refused below instead of waited on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {kSkipUnreadable, std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {kSkipNotAFile, "not a regular file any more"};
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    return {kSkipTooLarge,
            absl::StrCat(st.st_size, " bytes, more than the ", max_bytes, " any image within --max-pixels needs")};
  }
  bytes->resize(static_cast<size_t>(st.st_size) + 1);  // one more: a file that grew is read to its end
  size_t have = 0;
  for (;;) {
    if (have == bytes->size()) {
      if (static_cast<int64_t>(have) > max_bytes) {
        ::close(fd);
        return {kSkipTooLarge, absl::StrCat("more than ", max_bytes, " bytes")};
      }
      bytes->resize(have * 2);
    }
    const ssize_t n = ::read(fd, bytes->data() + have, bytes->size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return {kSkipUnreadable, std::strerror(error)};
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes->resize(have);
  return {};
}

const char* DecodeFailureReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return kSkipNotAnImage;
    case absl::StatusCode::kUnimplemented:
      return kSkipUnsupported;
    case absl::StatusCode::kOutOfRange:
      return kSkipTruncated;
    case absl::StatusCode::kResourceExhausted:
      return kSkipBomb;
    case absl::StatusCode::kFailedPrecondition:
      return kSkipTooSmall;
    default:
      return kSkipCorrupt;
  }
}

const char* ProblemReason(FolderEntry::Kind kind) {
  switch (kind) {
    case FolderEntry::Kind::kLinkLoop:
      return kSkipLinkLoop;
    case FolderEntry::Kind::kNotAFile:
      return kSkipNotAFile;
    default:
      return kSkipUnreadable;
  }
}

// The walk's visitor: one file at a time, decoded, fitted and appended.
class FolderPacker {
 public:
  FolderPacker(const PackRequest& request, const PackSettings& settings, PackedImagesWriter* writer,
               double progress_seconds)
      : request_(request),
        settings_(settings),
        writer_(writer),
        progress_seconds_(progress_seconds),
        record_(static_cast<size_t>(StoredChannels(settings.fit) * settings.fit.size * settings.fit.size)) {}

  absl::Status Visit(const FolderEntry& entry) {
    if (request_.stop_requested && request_.stop_requested()) {
      return absl::CancelledError(absl::StrCat("stopped after ", report_.files_seen, " files; nothing written"));
    }
    if (entry.kind == FolderEntry::Kind::kFile && writer_->IsTemporaryFile(entry.device, entry.inode)) {
      return absl::OkStatus();  // our own output, inside the folder being packed
    }
    ++report_.files_seen;
    absl::Status status;
    if (entry.kind == FolderEntry::Kind::kFile) {
      status = PackFile(entry);
    } else {
      Skip(entry, ProblemReason(entry.kind), entry.detail);
    }
    LogProgress();
    return status;
  }

  // A progress line when progress_seconds have passed since the last one.
  void LogProgress() {
    const SteadyClock::time_point now = SteadyClock::now();
    if (std::chrono::duration<double>(now - last_progress_).count() < progress_seconds_) return;
    last_progress_ = now;
    const int64_t skipped = static_cast<int64_t>(report_.skipped.size());
    spdlog::info("make-dataset: {} files seen, {} packed, {} skipped, {:.0f} images/s", report_.files_seen,
                 report_.packed, skipped, static_cast<double>(report_.packed) / std::max(Seconds(), 1e-9));
  }

  double Seconds() const { return std::chrono::duration<double>(SteadyClock::now() - start_).count(); }
  PackReport& report() { return report_; }
  const std::vector<std::string>& class_names() const { return class_names_; }
  bool skipped_files_outside_classes() const { return report_.skipped_by_reason.count(kSkipNoClass) > 0; }

 private:
  void Skip(const FolderEntry& entry, const char* reason, const std::string& detail) {
    ++report_.skipped_by_reason[reason];
    report_.skipped.emplace_back(entry.relative, detail.empty() ? reason : absl::StrCat(reason, ": ", detail));
    // With --strict nothing will be written: stop writing now, keep checking.
    if (request_.strict) writer_->Abandon();
  }

  absl::Status PackFile(const FolderEntry& entry) {
    int label = -1;
    std::string class_name;
    if (settings_.labelled) {
      const size_t slash = entry.relative.find('/');
      if (slash == std::string::npos) {
        Skip(entry, kSkipNoClass, "");
        return absl::OkStatus();
      }
      class_name = entry.relative.substr(0, slash);
      // The walk is in order, so a new class is always the next one.
      const bool known = !class_names_.empty() && class_names_.back() == class_name;
      label = static_cast<int>(class_names_.size()) - (known ? 1 : 0);
    }
    if (ReadFailure failure = ReadWholeFile(entry.path, settings_.max_file_bytes, &bytes_); failure.reason != nullptr) {
      Skip(entry, failure.reason, failure.detail);
      return absl::OkStatus();
    }
    ImageDecodeOptions options;
    options.max_pixels = settings_.max_pixels;
    options.min_side = kMinImageSide;
    options.least_size = [this](ImageSize file) { return PlanFit(file, settings_.fit).resized; };
    absl::StatusOr<DecodedImage> image = DecodeImage(bytes_, options);
    if (!image.ok()) {
      Skip(entry, DecodeFailureReason(image.status()), std::string(image.status().message()));
      return absl::OkStatus();
    }
    const FitGeometry geometry = PlanFit(image->file, settings_.fit);
    FitImage(*image, settings_.fit, record_);
    if (!request_.strict || report_.skipped.empty()) RETURN_IF_ERROR(writer_->Append(record_, label, entry.relative));
    ++report_.packed;
    if (geometry.resized.width > image->file.width || geometry.resized.height > image->file.height) {
      ++report_.upscaled;
    }
    if (settings_.labelled && label == static_cast<int>(class_names_.size())) class_names_.push_back(class_name);
    return absl::OkStatus();
  }

  const PackRequest& request_;
  const PackSettings& settings_;
  PackedImagesWriter* writer_;
  double progress_seconds_;
  SteadyClock::time_point start_ = SteadyClock::now();
  SteadyClock::time_point last_progress_ = SteadyClock::now();
  PackReport report_;
  std::vector<std::string> class_names_;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> record_;
};

void LogReport(const PackReport& report, const PackSettings& settings) {
  for (const auto& [file, reason] : report.skipped) {
    spdlog::warn("make-dataset: skipped {}: {}", EscapeForTerminal(file), EscapeForTerminal(reason));
  }
  std::string counts;
  for (const auto& [reason, n] : report.skipped_by_reason) {
    absl::StrAppend(&counts, counts.empty() ? "" : ", ", reason, " ", n);
  }
  const std::string upscaled = report.upscaled == 0
                                   ? ""
                                   : absl::StrCat(" (", report.upscaled, " of them scaled up: smaller than ",
                                                  settings.fit.size, "x", settings.fit.size, " needs)");
  spdlog::info("make-dataset: {} files seen: {} packed{}, {} skipped{}{}{}", report.files_seen, report.packed, upscaled,
               report.skipped.size(), counts.empty() ? "" : " (", counts, counts.empty() ? "" : ")");
}

// FNV-1a, 128 bits (offset basis and prime from the FNV specification).
class Fnv128 {
 public:
  void Bytes(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) {
      hash_ ^= p[i];
      hash_ *= kPrime;
    }
  }
  void Int(int64_t v) { Bytes(&v, sizeof(v)); }
  void String(const std::string& s) {
    Int(static_cast<int64_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  std::string Hex() const {
    return absl::StrFormat("%016x%016x", static_cast<uint64_t>(hash_ >> 64), static_cast<uint64_t>(hash_));
  }

 private:
  static constexpr unsigned __int128 kPrime = (static_cast<unsigned __int128>(1) << 88) + 0x13B;
  unsigned __int128 hash_ = (static_cast<unsigned __int128>(0x6c62272e07bb0142ULL) << 64) | 0x62b821756295c58dULL;
};

}  // namespace

absl::StatusOr<PackReport> PackImageFolder(const PackRequest& request, double progress_seconds) {
  ASSIGN_OR_RETURN(const PackSettings settings, CheckRequest(request));
  if (request.out.empty()) return absl::InvalidArgumentError("--out: give the file to write");
  struct stat st {};
  if (::lstat(request.out.c_str(), &st) == 0) {
    return absl::AlreadyExistsError(absl::StrCat("--out ", request.out,
                                                 ": exists; make-dataset never writes over a file: give a new path, or "
                                                 "move that one away"));
  }
  const size_t slash = request.out.rfind('/');
  const std::string out_folder = slash == std::string::npos ? "." : slash == 0 ? "/" : request.out.substr(0, slash);
  if (::stat(out_folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out ", request.out, ": ", out_folder, " is not a folder; create it first"));
  }
  RETURN_IF_ERROR(CheckFromIsAFolder(request.from));
  PackedImagesInfo layout;
  layout.image_size = settings.fit.size;
  layout.channels = StoredChannels(settings.fit);
  layout.fit = ImageFitName(settings.fit.fit);
  layout.alpha = AlphaHandlingName(settings.fit.alpha);
  layout.filter = kResampleFilterName;
  ASSIGN_OR_RETURN(std::unique_ptr<PackedImagesWriter> writer, PackedImagesWriter::Create(request.out, layout));

  FolderPacker packer(request, settings, writer.get(), progress_seconds);
  RETURN_IF_ERROR(ScanImageFolder(request.from, [&](const FolderEntry& e) { return packer.Visit(e); }));
  PackReport& report = packer.report();
  LogReport(report, settings);
  if (report.packed == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--from ", request.from, ": no image to pack (", report.files_seen, " files seen, ", report.skipped.size(),
        " skipped)",
        packer.skipped_files_outside_classes()
            ? "; with --labels folders the images must be in sub-folders, one per class: for a flat folder use "
              "--labels none"
            : ""));
  }
  if (request.strict && !report.skipped.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--strict: ", report.skipped.size(), " of ", report.files_seen,
                                                   " files skipped (listed above); nothing written"));
  }
  RETURN_IF_ERROR(writer->Finish(packer.class_names()));
  report.seconds = packer.Seconds();
  struct stat written {};
  if (::stat(request.out.c_str(), &written) == 0) report.file_bytes = written.st_size;
  const size_t classes = packer.class_names().size();
  spdlog::info("make-dataset: wrote {} ({} images of {}x{}x{}, {}, {:.2f} MB) in {:.1f} s, {:.0f} images/s",
               EscapeForTerminal(request.out), report.packed, layout.channels, layout.image_size, layout.image_size,
               classes == 0 ? std::string("unlabelled") : absl::StrCat(classes, classes == 1 ? " class" : " classes"),
               static_cast<double>(report.file_bytes) / 1e6, report.seconds,
               static_cast<double>(report.packed) / std::max(report.seconds, 1e-9));
  return std::move(report);
}

absl::StatusOr<std::string> ImageFolderKey(const PackRequest& request) {
  ASSIGN_OR_RETURN(const PackSettings settings, CheckRequest(request));
  RETURN_IF_ERROR(CheckFromIsAFolder(request.from));
  Fnv128 hash;
  hash.String("gantry packed images");
  hash.Int(kPackedImagesVersion);
  for (int64_t v : {settings.fit.size, static_cast<int64_t>(settings.fit.channels), settings.max_pixels}) hash.Int(v);
  for (const std::string& s :
       {std::string(ImageFitName(settings.fit.fit)), std::string(AlphaHandlingName(settings.fit.alpha)),
        std::string(kResampleFilterName), request.labels}) {
    hash.String(s);
  }
  RETURN_IF_ERROR(ScanImageFolder(request.from, [&](const FolderEntry& e) {
    hash.Int(static_cast<int64_t>(e.kind));
    hash.String(e.relative);
    hash.Int(e.size);
    hash.Int(e.mtime_ns);
    return absl::OkStatus();
  }));
  return hash.Hex();
}

}  // namespace gantry
