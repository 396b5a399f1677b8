#include "worker/eval/judge_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_codec.h"
#include "common/crc32c.h"
#include "common/file_io.h"

namespace gantry {
namespace {

constexpr char kMagic[] = "GANTRYJG";
constexpr uint32_t kMnistVersion = 1;   // the 1x28x28, 10-class judge; no shape recorded
constexpr uint32_t kShapedVersion = 2;  // any other shape, recorded
constexpr size_t kMaxJudgeBytes = 64 << 20;

std::string FirstPath(const std::string& dataset, const std::string& data_dir) {
  return absl::StrCat(data_dir, "/gantry-judge-", dataset, ".bin");
}

std::string CachePath(const std::string& dataset, const std::string& data_dir) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(data_dir, ec).lexically_normal().string();
  const uint32_t hash = Crc32c({reinterpret_cast<const uint8_t*>(absolute.data()), absolute.size()});
  return absl::StrFormat("%s/judge-%s-%08x.bin", JudgeCacheDir(), dataset, hash);
}

// Whether a judge may be written into `dir`: a folder that can be written and is meant
// to be (some write bit set: root could write anywhere, but a folder made read-only, as
// shared data often is, says not to), outside /usr (the system's package data).
bool MayWriteInto(const std::string& dir) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (ec || absolute.rfind("/usr/", 0) == 0) return false;
  struct stat st{};
  if (::stat(absolute.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 0222) == 0) return false;
  return ::access(absolute.c_str(), W_OK) == 0;
}

}  // namespace

std::string JudgeCacheDir() {
  // The one place gantry reads these variables: the XDG base-directory convention.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return absl::StrCat(xdg, "/gantry");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr && home[0] != '\0' ? home : "/tmp", "/.cache/gantry");
}

std::vector<std::string> JudgePaths(const std::string& dataset, const std::string& data_dir) {
  return {FirstPath(dataset, data_dir), CachePath(dataset, data_dir)};
}

std::vector<uint8_t> EncodeJudge(const Judge& judge) {
  ByteWriter w;
  w.Raw(kMagic, 8);
  const JudgeShape& shape = judge.shape();
  if (shape == JudgeShape{}) {
    w.U32(kMnistVersion);
  } else {
    w.U32(kShapedVersion);
    w.I64(shape.channels);
    w.I64(shape.side);
    w.I64(shape.classes);
  }
  w.String(judge.dataset);
  w.F64(judge.test_accuracy);
  const Tensor& p = judge.params().params();
  w.Floats({p.data(), static_cast<size_t>(p.numel())});
  w.I64(judge.test_features.dim);
  w.I64(judge.test_features.count);
  w.Doubles(judge.test_features.mean);
  w.Doubles(judge.test_features.covariance);
  std::vector<uint8_t> bytes = w.Take();
  const uint32_t crc = Crc32c(bytes);
  const auto* c = reinterpret_cast<const uint8_t*>(&crc);
  bytes.insert(bytes.end(), c, c + 4);
  return bytes;
}

absl::StatusOr<std::unique_ptr<Judge>> DecodeJudge(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    return absl::DataLossError(absl::StrCat(name, ": not a gantry judge file (no GANTRYJG header)"));
  }
  uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  const std::span<const uint8_t> body = bytes.first(bytes.size() - 4);
  ByteReader r(body.subspan(8), name);
  const uint32_t version = r.U32("version");
  if (version != kMnistVersion && version != kShapedVersion) {
    return absl::FailedPreconditionError(absl::StrCat(name, ": judge format version ", version, ", this build reads ",
                                                      kMnistVersion, " and ", kShapedVersion,
                                                      "; run gantry-worker train-judge again"));
  }
  if (Crc32c(body) != stored) {
    return absl::DataLossError(absl::StrCat(name, ": the CRC does not match (damaged); delete it and run "
                                                  "gantry-worker train-judge again"));
  }
  JudgeShape shape;
  if (version == kShapedVersion) {
    shape.channels = r.I64("channels");
    shape.side = r.I64("side");
    shape.classes = r.I64("classes");
    if (!r.status().ok()) return r.status();
    if (absl::Status s = CheckJudgeShape(shape); !s.ok()) {
      return absl::DataLossError(absl::StrCat(name, ": records a judge of ", JudgeShapeName(shape),
                                              ", which no judge has (", s.message(),
                                              "); delete it and run gantry-worker train-judge again"));
    }
  }
  auto judge = std::make_unique<Judge>(shape);
  judge->dataset = r.String("dataset");
  judge->test_accuracy = r.F64("test accuracy");
  const std::vector<float> params = r.Floats("parameters");
  judge->test_features.dim = r.I64("feature size");
  judge->test_features.count = r.I64("test images");
  judge->test_features.mean = r.Doubles("feature mean");
  judge->test_features.covariance = r.Doubles("feature covariance");
  if (absl::Status s = r.Finish(); !s.ok()) return s;
  const Tensor& p = judge->params().params();
  const FeatureStats& f = judge->test_features;
  if (static_cast<int64_t>(params.size()) != p.numel() || f.dim != kJudgeFeatures ||
      static_cast<int64_t>(f.mean.size()) != f.dim || static_cast<int64_t>(f.covariance.size()) != f.dim * f.dim) {
    return absl::DataLossError(absl::StrCat(name, ": holds ", params.size(), " parameters and ", f.dim,
                                            " features, this build's judge has ", p.numel(), " and ", kJudgeFeatures,
                                            "; run gantry-worker train-judge again"));
  }
  std::copy(params.begin(), params.end(), p.data());
  return judge;
}

absl::StatusOr<std::string> SaveJudge(const Judge& judge, const std::string& data_dir) {
  const std::vector<uint8_t> bytes = EncodeJudge(judge);
  std::string errors;
  const std::vector<std::string> paths = JudgePaths(judge.dataset, data_dir);
  for (const std::string& path : paths) {
    if (path == paths[0] && !MayWriteInto(data_dir)) {
      absl::StrAppend(&errors, data_dir, " is read-only, a package folder or missing");
      continue;
    }
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const absl::Status s = WriteFileAtomically(path, {ByteSpan{bytes.data(), bytes.size()}});
    if (s.ok()) return path;
    absl::StrAppend(&errors, errors.empty() ? "" : "; ", s.message());
  }
  return absl::PermissionDeniedError(absl::StrCat("cannot save the judge: ", errors));
}

absl::StatusOr<std::pair<std::unique_ptr<Judge>, std::string>> FindJudge(const std::string& dataset,
                                                                         const std::string& data_dir,
                                                                         const JudgeShape& shape) {
  const std::vector<std::string> paths = JudgePaths(dataset, data_dir);
  for (const std::string& path : paths) {
    std::error_code ec;  // not throwing; a path that cannot be looked at is refused by the read below
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
    absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxJudgeBytes);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<std::unique_ptr<Judge>> judge = DecodeJudge(*bytes, path);
    if (!judge.ok()) return judge.status();
    if ((*judge)->dataset != dataset) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": a judge of ", (*judge)->dataset, ", not of ", dataset,
                                                        "; run gantry-worker train-judge --dataset ", dataset));
    }
    if ((*judge)->shape() != shape) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, ": a judge of ", JudgeShapeName((*judge)->shape()), ", this run's are ", JudgeShapeName(shape),
          "; train one for them with gantry-worker train-judge --dataset ", dataset, " --retrain"));
    }
    return std::make_pair(std::move(*judge), path);
  }
  return absl::NotFoundError(absl::StrCat("no quality judge for ", dataset, " in ", data_dir, " (looked for ",
                                          paths[0], " and ", paths[1], "); make one with: gantry-worker train-judge "
                                          "--dataset ", dataset, " --data-dir ", data_dir));
}

}  // namespace gantry
