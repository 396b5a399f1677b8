#include "worker/flow/flow_writer.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "nlohmann/json.hpp"
#include "worker/formats/npy.h"

namespace gantry::flow {

std::string FlowJson(const FlowSetup& s, const FlowResult& r) {
  const FlowRequest& q = s.request;
  nlohmann::ordered_json j;
  j["generator"] = "gantry-worker make-flow (D2Q9 BGK lattice Boltzmann)";
  j["nx"] = q.nx;
  j["ny"] = q.ny;
  j["frames"] = q.frames;
  j["channels"] = {"ux", "uy", "vorticity"};
  j["units"] = "lattice units: cell = 1, time step = 1; vorticity = d(uy)/dx - d(ux)/dy";
  j["re"] = q.re;
  j["re_definition"] = "U * D / nu: U the inlet velocity, D the obstacle's diameter (or side)";
  j["u_lattice"] = q.u_lattice;
  j["mach"] = s.mach();
  j["nu"] = s.nu;
  j["tau"] = s.tau;
  j["omega"] = s.omega;
  j["diameter"] = s.obstacle.diameter;
  j["obstacle"] = {{"kind", ObstacleKindName(s.obstacle.kind)}, {"cx", s.obstacle.cx}, {"cy", s.obstacle.cy}};
  j["boundaries"] = {{"inlet", "x = 0: uniform velocity (U, 0), equilibrium populations at the Zou/He density"},
                     {"outlet", "x = nx-1: zero-gradient outflow"},
                     {"sides", "periodic in y"},
                     {"obstacle", "half-way bounce-back"}};
  j["every"] = s.every;
  j["warmup_periods"] = q.warmup_periods;
  j["warmup_steps"] = s.warmup_steps;
  j["estimated_period_steps"] = s.estimated_period;
  j["steps"] = r.steps;
  j["seed"] = q.seed;
  j["initial_perturbation"] = "uniform random uy in [-0.01 U, 0.01 U] per cell, from seed";
  j["probe"] = {{"x", s.probe_x}, {"y", s.probe_y}};
  if (r.strouhal.found) {
    j["strouhal"] = r.strouhal.strouhal;
    j["shedding_period_steps"] = 1.0 / r.strouhal.frequency;
    j["strouhal_periods"] = r.strouhal.periods;
  } else {
    j["strouhal"] = nullptr;
    j["strouhal_missing"] = r.strouhal.why_not;
  }
  j["strouhal_method"] = kStrouhalMethod;
  nlohmann::ordered_json norm;
  for (int c = 0; c < kChannels; ++c) {
    norm[kChannelNames[c]] = {{"offset", r.normalisation[c].offset}, {"scale", r.normalisation[c].scale}};
  }
  j["normalisation"] = norm;
  j["normalisation_rule"] = "normalised = (value - offset) / scale: mid-range and half-range over all frames";
  j["mlups"] = r.mlups();
  j["step_seconds"] = r.step_seconds;
  j["total_seconds"] = r.total_seconds;
  return j.dump(2) + "\n";
}

absl::Status WriteFlowCase(const std::string& dir, const FlowSetup& s, const FlowResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return FileError(dir, "cannot create the output folder", ec.value());
  const int64_t ny = s.request.ny, nx = s.request.nx;
  // The first file claims the folder: created, never replaced, so of two make-flows
  // racing to one --out (both found it free) one writes and the other stops here.
  if (absl::Status st = CreateNpy(dir + "/frames.npy", r.frames.data(), {s.request.frames, 3, ny, nx}); !st.ok()) {
    if (absl::IsAlreadyExists(st)) {
      return absl::InvalidArgumentError(absl::StrCat("--out ", dir, ": another writer filled it meanwhile (",
                                                     st.message(), "); make-flow never writes over files: give a "
                                                     "new folder"));
    }
    return st;
  }
  if (absl::Status st = WriteNpy(dir + "/mask.npy", r.mask.data(), {ny, nx}); !st.ok()) return st;
  return WriteFileAtomically(dir + "/flow.json", FlowJson(s, r));
}

}  // namespace gantry::flow
