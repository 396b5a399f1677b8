#include "worker/train/checkpoint_store.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/train/checkpoint_codec.h"

namespace gantry {
namespace fs = std::filesystem;
namespace {

// "ckpt-<digits>.bin" -> the step; anything else -> -1.
int64_t StepOf(const std::string& filename) {
  static const std::regex kName("ckpt-([0-9]{1,18})\\.bin");
  std::smatch m;
  int64_t step = -1;
  if (!std::regex_match(filename, m, kName) || !absl::SimpleAtoi(m[1].str(), &step)) return -1;
  return step;
}

}  // namespace

std::string CheckpointStore::PathFor(int64_t step) const { return absl::StrFormat("%s/ckpt-%d.bin", dir_, step); }

absl::Status CheckpointStore::Save(int64_t step, std::span<const uint8_t> bytes, int64_t keep) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return FileError(dir_, "cannot create the checkpoint folder", ec.value());
  RETURN_IF_ERROR(WriteFileAtomically(PathFor(step), {ByteSpan{bytes.data(), bytes.size()}}));
  return Prune(std::max<int64_t>(keep, 1));
}

absl::StatusOr<std::vector<CheckpointFile>> CheckpointStore::List() const {
  std::vector<CheckpointFile> files;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return files;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = StepOf(it->path().filename().string());
    if (step >= 0 && it->is_regular_file()) files.push_back({step, it->path().string()});
  }
  if (ec) return FileError(dir_, "cannot list the checkpoint folder", ec.value());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.step > b.step; });
  return files;
}

absl::Status CheckpointStore::Prune(int64_t keep) const {
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, List());
  for (size_t i = static_cast<size_t>(keep); i < files.size(); ++i) {
    std::error_code ec;
    if (!fs::remove(files[i].path, ec) && ec) {
      spdlog::warn("{}: cannot delete an old checkpoint: {}", files[i].path, ec.message());
    }
  }
  return absl::OkStatus();
}

void CheckpointStore::RemoveLeftoverTemporaries() const {
  static const std::regex kTemporary("ckpt-[0-9]+\\.bin\\.tmp\\..*");
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!std::regex_match(it->path().filename().string(), kTemporary)) continue;
    std::error_code rm;
    fs::remove(it->path(), rm);
    spdlog::info("removed {}, left by an interrupted checkpoint write", it->path().string());
  }
}

absl::StatusOr<LoadedCheckpoint> CheckpointStore::LoadNewestUsable(const CheckpointExpectations& run) const {
  ASSIGN_OR_RETURN(const std::vector<CheckpointFile> files, List());
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat(dir_, ": no checkpoints to resume from (the run stopped before its first ",
                                            "checkpoint, or was written without checkpoints); start it again"));
  }
  LoadedCheckpoint loaded;
  for (const CheckpointFile& file : files) {
    absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(file.path);
    absl::Status fault = bytes.status();
    if (fault.ok()) {
      absl::StatusOr<TrainingState> state = DecodeCheckpoint(*bytes, file.path);
      fault = state.ok() ? CheckMatchesRun(*state, run, file.path) : state.status();
      if (fault.ok()) {
        loaded.path = file.path;
        loaded.bytes = std::move(*bytes);
        loaded.state = std::move(*state);
        return loaded;
      }
    }
    loaded.passed_over.push_back(std::string(fault.message()));
  }
  return absl::DataLossError(absl::StrCat("no usable checkpoint in ", dir_, ": ",
                                          absl::StrJoin(loaded.passed_over, "; ")));
}

}  // namespace gantry
