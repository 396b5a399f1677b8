#include "worker/generate/generate_output.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "worker/formats/npy.h"
#include "worker/monitor/image_grid.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

absl::Status CheckFree(const std::string& out) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(out, ec);
  if (!fs::exists(st)) return absl::OkStatus();
  if (!fs::is_directory(st) || !fs::is_empty(out, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", out, " exists and is not an empty folder; generate never "
                                                   "writes over files: give a new folder"));
  }
  return absl::OkStatus();
}

std::string SampleName(int64_t i, int64_t count) {
  const int digits = std::max(5, static_cast<int>(std::to_string(count - 1).size()));
  return absl::StrFormat("sample-%0*d.png", digits, i);
}

// `out` without trailing slashes ("new/" names the folder "new"; "/" stays "/"), so the
// staging folder goes beside it, not inside it.
std::string WithoutTrailingSlashes(std::string out) {
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

absl::StatusOr<GenerateOutput> GenerateOutput::Prepare(const std::string& given) {
  if (given.empty()) return absl::InvalidArgumentError("--out: give the folder to write the samples to");
  const std::string out = WithoutTrailingSlashes(given);
  RETURN_IF_ERROR(CheckFree(out));
  const fs::path path = fs::path(out).lexically_normal();
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", out, ": cannot create the folder ", parent.string(), ": ",
                                                   ec.message(), "; give a folder in a writable place"));
  }
  const std::string staging = absl::StrCat((parent / path.filename()).string(), ".partial-", getpid());
  if (!fs::create_directory(staging, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", out, ": cannot create the staging folder ", staging, ": ",
                                                   ec ? ec.message() : "it exists",
                                                   "; give a folder in a writable place"));
  }
  return GenerateOutput(out, staging);
}

GenerateOutput::GenerateOutput(GenerateOutput&& other) noexcept
    : out_(std::move(other.out_)), staging_(std::move(other.staging_)), published_(other.published_) {
  other.published_ = true;  // the moved-from object owns nothing
}

GenerateOutput::~GenerateOutput() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

absl::Status GenerateOutput::Publish() {
  RETURN_IF_ERROR(CheckFree(out_));
  // An empty folder at `out` (allowed) gives way first: rmdir(2) removes only an empty
  // one, so a file put there since stays. Then the move never replaces anything: of two
  // generates racing to one --out, one publishes and the other is refused.
  if (::rmdir(out_.c_str()) != 0 && errno != ENOENT) {
    const int error = errno;
    RETURN_IF_ERROR(CheckFree(out_));  // something was put there meanwhile: named
    return FileError(out_, "cannot remove the empty folder there", error);
  }
  if (absl::Status moved = PublishWithoutReplacing(staging_, out_); !moved.ok()) {
    if (!absl::IsAlreadyExists(moved)) return moved;
    return absl::InvalidArgumentError(absl::StrCat("--out ", out_, " appeared while generating (another generate to "
                                                   "it?); generate never writes over files: it is left as it is, give "
                                                   "a new folder"));
  }
  published_ = true;
  return absl::OkStatus();
}

absl::Status WriteGeneratedFiles(const std::string& folder, const GeneratedSamples& g, const std::string& info_json,
                                 const std::function<absl::Status(int64_t)>& before_sample) {
  const int64_t k = g.inputs.dim(0);
  auto go_on = [&](int64_t i) { return before_sample ? before_sample(i) : absl::OkStatus(); };
  const int64_t c = g.sample_shape[0], h = g.sample_shape[1], w = g.sample_shape[2];
  if (g.colour_images) {
    // An image model's grid is square-ish, in its images' colours.
    for (int64_t i = 0; i < k; ++i) {
      RETURN_IF_ERROR(go_on(i));
      RETURN_IF_ERROR(
          WriteColorPngGrid(folder + "/" + SampleName(i, k), g.samples.data() + i * c * h * w, 1, c, h, w, 1));
    }
    const int64_t shown = std::min(k, kGridImages);
    const int64_t columns = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(shown))));
    RETURN_IF_ERROR(WriteColorPngGrid(folder + "/grid.png", g.samples.data(), shown, c, h, w, columns));
  } else {
    // A next-frame model's fields side by side, one sample a row.
    for (int64_t i = 0; i < k; ++i) {
      RETURN_IF_ERROR(go_on(i));
      RETURN_IF_ERROR(WritePngGrid(folder + "/" + SampleName(i, k), g.samples.data() + i * c * h * w, c, h, w, c));
    }
    const int64_t shown = std::min(k, kGridFrames);
    RETURN_IF_ERROR(WritePngGrid(folder + "/grid.png", g.samples.data(), shown * c, h, w, c));
  }
  std::vector<int64_t> shape = {k};
  shape.insert(shape.end(), g.sample_shape.begin(), g.sample_shape.end());
  RETURN_IF_ERROR(WriteNpy(folder + "/samples.npy", g.samples.data(), shape));
  RETURN_IF_ERROR(WriteNpy(folder + "/inputs.npy", g.inputs.data(), g.inputs.shape().dims()));
  return WriteFileAtomically(folder + "/generate.json", info_json);
}

}  // namespace gantry
