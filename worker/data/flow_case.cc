#include "worker/data/flow_case.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/formats/npy.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFlowJsonBytes = 1 << 20;
// frames.npy of the largest case make-flow writes (flow_params.h: 4 GiB), with its header.
constexpr size_t kMaxCaseArrayBytes = (size_t{4} << 30) + (size_t{1} << 16);
constexpr char kRemake[] = "write the case again with `gantry-worker make-flow --out DIR ...`";

std::string DimsText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

absl::Status Bad(const std::string& path, const std::string& what, const std::string& fix = kRemake) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, "; ", fix));
}

// A missing file or a reader error (a folder, a FIFO, a file too large to hold), as
// INVALID_ARGUMENT naming the file.
absl::StatusOr<NpyArray> ReadCaseArray(const std::string& path) {
  absl::StatusOr<NpyArray> array = ReadNpy(path, kMaxCaseArrayBytes);
  if (absl::IsNotFound(array.status())) {
    return Bad(path, "missing (a flow case folder holds frames.npy, mask.npy and flow.json)");
  }
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

// flow.json, read as regular files are (a FIFO or folder is refused at once by name) and
// parsed; what is wrong with it is said: the parser's reason (NaN, 1e400, bad UTF-8 and
// the place), or what it holds instead of an object.
absl::StatusOr<nlohmann::json> ReadJson(const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxFlowJsonBytes);
  if (absl::IsNotFound(bytes.status())) {
    return Bad(path, "missing (it holds the case's parameters and normalisation)");
  }
  if (!bytes.ok()) return absl::InvalidArgumentError(std::string(bytes.status().message()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes->begin(), bytes->end());
  } catch (const nlohmann::json::exception& e) {
    return Bad(path, absl::StrCat("not a JSON object: it is not valid JSON (",
                                  EscapeForTerminal(std::string(e.what()).substr(0, 200)), ")"));
  }
  if (!j.is_object()) return Bad(path, absl::StrCat("not a JSON object (it is a JSON ", j.type_name(), ")"));
  return j;
}

// A double that converts to a float exactly enough and without undefined behaviour.
bool FitsFloat(double v) { return std::isfinite(v) && std::abs(v) <= std::numeric_limits<float>::max(); }

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
    // As doubles first: a value beyond float's range must not be narrowed (undefined).
    const double offset = (*ch)["offset"].get<double>(), scale = (*ch)["scale"].get<double>();
    if (!FitsFloat(offset) || !FitsFloat(scale) || !(scale > 0)) {
      return Bad(path, absl::StrCat("normalisation.", name, " has offset ", offset, " and scale ", scale,
                                    "; the scale must be positive and both finite floats"));
    }
    n.offset[c] = static_cast<float>(offset);
    n.scale[c] = static_cast<float>(scale);
    if (!(n.scale[c] > 0)) {
      return Bad(path, absl::StrCat("normalisation.", name, " has scale ", scale, ", which is 0 as a float"));
    }
  }
  return n;
}

// `key` as a finite number; absent, or not one, is nullopt.
std::optional<double> OptionalReal(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// `key` as a whole number within +-2^53 (what every field of flow.json fits); a fraction,
// a huge value or a non-number is nullopt (never converted out of range: undefined).
std::optional<int64_t> OptionalWhole(const nlohmann::json& j, const char* key) {
  constexpr double kLimit = 9007199254740992.0;  // 2^53
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_integer() && !it->is_number_unsigned()) {
    const int64_t v = it->get<int64_t>();
    return v >= -kLimit && v <= kLimit ? std::optional<int64_t>(v) : std::nullopt;
  }
  const double v = it->get<double>();
  if (!(std::abs(v) <= kLimit) || v != std::floor(v)) return std::nullopt;
  return static_cast<int64_t>(v);
}

FlowCaseInfo ParseInfo(const nlohmann::json& j) {
  FlowCaseInfo info;
  info.diameter = OptionalReal(j, "diameter");
  info.u_lattice = OptionalReal(j, "u_lattice");
  info.every = OptionalWhole(j, "every");
  info.strouhal = OptionalReal(j, "strouhal");
  info.re = OptionalReal(j, "re");
  if (const auto p = j.find("probe"); p != j.end() && p->is_object()) {
    info.probe_x = OptionalWhole(*p, "x");
    info.probe_y = OptionalWhole(*p, "y");
  }
  return info;
}

// flow.json's nx, ny and frames, when given, must agree with the arrays.
absl::Status CheckDimensions(const std::string& path, const nlohmann::json& j, const FlowCase& c) {
  const std::pair<const char*, int64_t> dims[] = {{"nx", c.nx}, {"ny", c.ny}, {"frames", c.frames}};
  for (const auto& [key, actual] : dims) {
    const std::optional<int64_t> said = OptionalWhole(j, key);
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
