#include "worker/data/flow_case.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/formats/npy.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFlowJsonBytes = 1 << 20;
constexpr char kRemake[] = "write the case again with `gantry-worker make-flow --out DIR ...`";

std::string DimsText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

absl::Status Bad(const std::string& path, const std::string& what, const std::string& fix = kRemake) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, "; ", fix));
}

// A missing file or a reader error, as INVALID_ARGUMENT naming the file.
absl::StatusOr<NpyArray> ReadCaseArray(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Bad(path, "missing (a flow case folder holds frames.npy, mask.npy and flow.json)");
  absl::StatusOr<NpyArray> array = ReadNpy(path);
  if (!array.ok()) return absl::InvalidArgumentError(std::string(array.status().message()));
  return array;
}

absl::Status CheckFinite(const std::string& path, const std::vector<float>& values) {
  const auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  if (bad == values.end()) return absl::OkStatus();
  return Bad(path, absl::StrCat("value ", *bad, " at flat index ", bad - values.begin(),
                                " (the simulation diverged: lower --re or --u-lattice, or raise the resolution)"),
             kRemake);
}

absl::StatusOr<nlohmann::json> ReadJson(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Bad(path, "missing (it holds the case's parameters and normalisation)");
  ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ReadFileBytes(path, kMaxFlowJsonBytes));
  nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad(path, "not a JSON object");
  return j;
}

absl::StatusOr<FlowNormalisation> ParseNormalisation(const std::string& path, const nlohmann::json& j) {
  const auto it = j.find("normalisation");
  if (it == j.end() || !it->is_object()) {
    return Bad(path, R"(no "normalisation" object ({"ux": {"offset": a, "scale": s}, "uy": ..., "vorticity": ...}))");
  }
  FlowNormalisation n;
  for (int c = 0; c < kFlowChannels; ++c) {
    const char* name = FlowChannelNames()[c];
    const auto ch = it->find(name);
    if (ch == it->end() || !ch->is_object() || !ch->contains("offset") || !ch->contains("scale") ||
        !(*ch)["offset"].is_number() || !(*ch)["scale"].is_number()) {
      return Bad(path, absl::StrCat("normalisation.", name, " needs numbers \"offset\" and \"scale\""));
    }
    n.offset[c] = (*ch)["offset"].get<float>();
    n.scale[c] = (*ch)["scale"].get<float>();
    if (!std::isfinite(n.offset[c]) || !std::isfinite(n.scale[c]) || !(n.scale[c] > 0)) {
      return Bad(path, absl::StrCat("normalisation.", name, " has offset ", n.offset[c], " and scale ", n.scale[c],
                                    "; the scale must be positive and both finite"));
    }
  }
  return n;
}

template <typename T>
std::optional<T> Optional(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<T>();
}

FlowCaseInfo ParseInfo(const nlohmann::json& j) {
  FlowCaseInfo info;
  info.diameter = Optional<double>(j, "diameter");
  info.u_lattice = Optional<double>(j, "u_lattice");
  info.every = Optional<int64_t>(j, "every");
  info.strouhal = Optional<double>(j, "strouhal");
  info.re = Optional<double>(j, "re");
  if (const auto p = j.find("probe"); p != j.end() && p->is_object()) {
    info.probe_x = Optional<int64_t>(*p, "x");
    info.probe_y = Optional<int64_t>(*p, "y");
  }
  return info;
}

// flow.json's nx, ny and frames, when given, must agree with the arrays.
absl::Status CheckDimensions(const std::string& path, const nlohmann::json& j, const FlowCase& c) {
  const std::pair<const char*, int64_t> dims[] = {{"nx", c.nx}, {"ny", c.ny}, {"frames", c.frames}};
  for (const auto& [key, actual] : dims) {
    const std::optional<int64_t> said = Optional<int64_t>(j, key);
    if (said && *said != actual) {
      return Bad(path, absl::StrCat("says ", key, " = ", *said, " but frames.npy has ", actual,
                                    " (the files are of different cases?)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const std::array<const char*, kFlowChannels>& FlowChannelNames() {
  static const std::array<const char*, kFlowChannels> names = {"ux", "uy", "vorticity"};
  return names;
}

absl::StatusOr<FlowCase> LoadFlowCase(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Bad(dir, "not a folder", "pass a case folder written by `gantry-worker make-flow --out DIR`");
  }
  const std::string frames_path = (fs::path(dir) / "frames.npy").string();
  const std::string mask_path = (fs::path(dir) / "mask.npy").string();
  const std::string json_path = (fs::path(dir) / "flow.json").string();

  ASSIGN_OR_RETURN(NpyArray frames, ReadCaseArray(frames_path));
  if (frames.shape.size() != 4 || frames.shape[1] != kFlowChannels || frames.shape[0] < 1 || frames.shape[2] < 1 ||
      frames.shape[3] < 1) {
    return Bad(frames_path, absl::StrCat("shape ", DimsText(frames.shape),
                                         ", expected [T, 3, NY, NX] with channels (ux, uy, vorticity)"),
               "save the frames as np.float32 of shape (T, 3, NY, NX), or write the case with make-flow");
  }
  FlowCase c;
  c.dir = dir;
  c.frames = frames.shape[0];
  c.ny = frames.shape[2];
  c.nx = frames.shape[3];
  RETURN_IF_ERROR(CheckFinite(frames_path, frames.data));
  c.fields = std::move(frames.data);

  ASSIGN_OR_RETURN(NpyArray mask, ReadCaseArray(mask_path));
  if (mask.shape != std::vector<int64_t>{c.ny, c.nx}) {
    return Bad(mask_path, absl::StrCat("shape ", DimsText(mask.shape), ", expected [", c.ny, ", ", c.nx,
                                       "] (NY, NX of frames.npy)"),
               "save the obstacle mask as np.float32 of shape (NY, NX), 1 inside the obstacle and 0 in fluid");
  }
  RETURN_IF_ERROR(CheckFinite(mask_path, mask.data));
  c.mask = std::move(mask.data);

  ASSIGN_OR_RETURN(const nlohmann::json j, ReadJson(json_path));
  ASSIGN_OR_RETURN(c.norm, ParseNormalisation(json_path, j));
  RETURN_IF_ERROR(CheckDimensions(json_path, j, c));
  c.info = ParseInfo(j);
  return c;
}

absl::StatusOr<std::vector<std::string>> FindFlowCases(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Bad(root, "not a folder",
               "pass --data-dir a case folder written by `gantry-worker make-flow --out DIR`, or a folder of them");
  }
  if (fs::is_regular_file(fs::path(root) / "frames.npy", ec)) return std::vector<std::string>{root};
  std::vector<std::string> cases;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && fs::is_regular_file(it->path() / "frames.npy", ec)) cases.push_back(it->path().string());
  }
  if (ec) return Bad(root, absl::StrCat("cannot list the folder: ", ec.message()), "check its permissions");
  if (cases.empty()) {
    return Bad(root, "holds no flow case (neither frames.npy nor sub-folders with frames.npy)",
               "make one with `gantry-worker make-flow --out ROOT/case0 ...`");
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

void NormaliseFrame(const FlowCase& c, int64_t t, float* out) {
  const float* in = c.frame(t);
  const int64_t plane = c.plane();
  for (int ch = 0; ch < kFlowChannels; ++ch) {
    const float offset = c.norm.offset[ch];
    const float inv = 1.0f / c.norm.scale[ch];
    for (int64_t i = 0; i < plane; ++i) out[ch * plane + i] = (in[ch * plane + i] - offset) * inv;
  }
}

void DenormaliseFrame(const FlowNormalisation& norm, int64_t plane, float* frame) {
  for (int ch = 0; ch < kFlowChannels; ++ch) {
    for (int64_t i = 0; i < plane; ++i) frame[ch * plane + i] = frame[ch * plane + i] * norm.scale[ch] + norm.offset[ch];
  }
}

}  // namespace gantry
