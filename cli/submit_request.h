// What `gantry submit` sends: the run file's settings, then the flags over them, as a
// RunSpec, with the submission's world size, attempts and name; and what `gantry
// rollout` sends.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry::cli {

struct SubmitArgs {
  std::string run_file;                          // YAML/JSON of setting: value pairs; may be empty
  std::map<std::string, std::string> settings;   // from flags; override the run file
  int world_size = 0;
  int max_attempts = 0;
  std::string name;
  bool watch = false;
};

// `gantry rollout JOB_ID --case DIR --steps H ...`: a rollout of a finished run
// (proto/gantry/v1/rollout_spec.proto); unset options keep gantry-worker rollout's defaults.
struct RolloutArgs {
  std::string source_job_id;
  std::string case_dir;     // made absolute against the current folder
  int64_t steps = 0;
  std::optional<int64_t> start_frame, tile, overlap, group, tile_batch, report_every;
  std::string blend;
  int world_size = 0;
  int max_attempts = 0;
  std::string name;
  bool watch = false;
};

// `gantry generate JOB_ID [--count K --seed S ...]`: samples from a finished run
// (proto/gantry/v1/generate_spec.proto); unset options keep gantry-worker generate's defaults.
struct GenerateArgs {
  std::string source_job_id;
  std::string name;          // RUN/generate-<name>/ [the job's id]
  std::optional<int64_t> count, checkpoint, batch, steps, frame;
  std::optional<uint64_t> seed;
  std::string precision;
  std::string interpolate;
  std::string case_dir;      // made absolute against the current folder
  int world_size = 0;
  int max_attempts = 0;
  std::string label;         // the job's name in `gantry jobs`
  bool watch = false;
};

// A relative data-dir is made absolute against the current folder, as gantry-worker
// would read it here (the coordinator and the workers may run elsewhere). Errors name
// the run file or the setting.
absl::StatusOr<v1::SubmitJobRequest> BuildSubmitRequest(const SubmitArgs& args);

// A rollout submission (SubmitJobRequest.rollout, no spec). The case folder is made
// absolute as a data-dir is; every other check is the coordinator's.
v1::SubmitJobRequest BuildRolloutRequest(const RolloutArgs& args);

// A generate submission (SubmitJobRequest.generate, no spec); the case folder is made
// absolute as a data-dir is; every other check is the coordinator's.
v1::SubmitJobRequest BuildGenerateRequest(const GenerateArgs& args);

}  // namespace gantry::cli
