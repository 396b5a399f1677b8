// Fuzz target: the flow case reader (worker/data/flow_case.h), through the file a user
// is most likely to write or damage by hand: flow.json.
//
// Input: flow.json. The case's arrays are fixed and valid (frames.npy [2, 3, 4, 4],
// mask.npy [4, 4]), written once into a scratch folder, so every input tests the JSON
// side: keys missing, of the wrong type, contradicting the arrays, normalisation scales
// of zero, NaN or huge. Every input must end in a case or an error naming a file, never
// a crash; a case must hold the arrays' sizes, usable normalisation constants, and every
// optional field (diameter, u_lattice, every, strouhal, re, probe) absent or of its kind.
// The corpus has each field as NaN, 1e400, 1e300, a float for a whole number, a whole
// number past int64 and invalid UTF-8 (make_corpus.py).
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "worker/data/flow_case.h"
#include "worker/formats/npy.h"

namespace {

constexpr int64_t kFrames = 2, kNy = 4, kNx = 4;

// The scratch case folder, its arrays written on first use.
const std::string& CaseFolder(const gantry::fuzz::ScratchFile& json) {
  static const std::string dir = [&] {
    const std::string d = json.path().substr(0, json.path().rfind('/'));
    mkdir(d.c_str(), 0700);
    std::vector<float> frames(kFrames * gantry::kFlowChannels * kNy * kNx);
    for (size_t i = 0; i < frames.size(); ++i) frames[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
    std::vector<float> mask(kNy * kNx, 0.0f);
    mask[5] = 1.0f;
    FUZZ_EXPECT(gantry::WriteNpy(d + "/frames.npy", frames.data(), {kFrames, gantry::kFlowChannels, kNy, kNx}).ok(),
                "frames.npy");
    FUZZ_EXPECT(gantry::WriteNpy(d + "/mask.npy", mask.data(), {kNy, kNx}).ok(), "mask.npy");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gantry::fuzz::ScratchFile json("-flowcase/flow.json");
  static gantry::fuzz::ScratchFile frames("-flowcase/frames.npy");  // removed at exit
  static gantry::fuzz::ScratchFile mask("-flowcase/mask.npy");
  const std::string& dir = CaseFolder(json);
  json.Write(data, size);

  const absl::StatusOr<gantry::FlowCase> c = gantry::LoadFlowCase(dir);
  if (!c.ok()) {
    const std::string message(c.status().message());
    FUZZ_EXPECT(message.find(dir) != std::string::npos || message.find("flow.json") != std::string::npos,
                "an error names the file");
    return 0;
  }
  FUZZ_EXPECT(c->frames == kFrames && c->ny == kNy && c->nx == kNx, "the case has the arrays' shape");
  FUZZ_EXPECT(c->fields.size() == static_cast<size_t>(kFrames * c->frame_numel()), "fields match the shape");
  FUZZ_EXPECT(c->mask.size() == static_cast<size_t>(c->plane()), "the mask matches the plane");
  for (int ch = 0; ch < gantry::kFlowChannels; ++ch) {
    FUZZ_EXPECT(std::isfinite(c->norm.offset[ch]), "a finite offset");
    FUZZ_EXPECT(std::isfinite(c->norm.scale[ch]) && c->norm.scale[ch] > 0, "a positive finite scale");
  }
  // Every optional field is absent or a value of its kind: finite reals, whole numbers
  // that were whole in the file and inside +-2^53 (never a float converted out of range).
  const gantry::FlowCaseInfo& info = c->info;
  for (const std::optional<double>& real : {info.diameter, info.u_lattice, info.strouhal, info.re}) {
    FUZZ_EXPECT(!real || std::isfinite(*real), "a finite real field");
  }
  constexpr int64_t kLimit = int64_t{1} << 53;
  for (const std::optional<int64_t>& whole : {info.every, info.probe_x, info.probe_y}) {
    FUZZ_EXPECT(!whole || (*whole >= -kLimit && *whole <= kLimit), "a whole-number field within 2^53");
  }
  return 0;
}
