// The files of a job's run folder that the dashboard shows, found from the job alone:
// the newest sample grid (samples/[bBBBB/]epoch_NNN.png of the newest epoch row), the
// newest generated grid (generate-<name>/grid.png) and a flow run's rollout curve
// (rollout.csv). No part of an HTTP request ever becomes a
// path: the folder is the one the job's group reported (Job.checkpoint.run_folder) and
// the names inside it are made here from numbers.
//
// The folder must be absolute and hold a run.json (so a group that reports "/" exposes
// nothing); below it, every component is opened with O_NOFOLLOW relative to its parent,
// so a symbolic link anywhere inside the run folder (samples/ -> /etc, or
// epoch_001.png -> a secret) is refused, as is anything but a regular file (a FIFO is
// not waited on) or a file larger than the cap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/coordinator.pb.h"
#include "nlohmann/json.hpp"

namespace gantry {

inline constexpr size_t kMaxSampleGridBytes = 16 << 20;
inline constexpr size_t kMaxRolloutCsvBytes = 4 << 20;
inline constexpr size_t kMaxRolloutSummaryBytes = 64 << 10;

struct SampleGrid {
  int64_t batch_size = 0;
  int64_t epoch = 0;
  std::string png;  // the file's bytes (checked to start with the PNG signature)
};

// The grid of the newest epoch row whose PNG exists; NOT_FOUND when the job reported no
// run folder or none of its grids can be read here (the coordinator may not share a
// file system with the group), naming why.
absl::StatusOr<SampleGrid> ReadNewestSampleGrid(const v1::JobReport& report);

// The grid of the newest generate folder of the job's run folder (RUN/generate-<name>/
// grid.png, newest by modification time, then by name): what `gantry generate` jobs and
// `gantry-worker generate --out RUN/generate-...` write. NOT_FOUND when there is none
// readable here.
struct GeneratedGrid {
  std::string folder;  // "generate-<name>"
  std::string png;
};
absl::StatusOr<GeneratedGrid> ReadNewestGeneratedGrid(const v1::Job& job);

// rollout.csv (a header line, then comma-separated numbers; the dashboard plots every
// column against the first), at the run folder's top or, as `gantry-worker rollout`
// writes it by default, in RUN/rollout-<case>/ (the last such folder by name), as {"columns": [header names], "rows": [[numbers or null]]};
// NOT_FOUND when the run folder holds none, INVALID_ARGUMENT when it is malformed. With a
// rollout.json beside it (the rollout's marks: first steps below 0.95 and 0.8, blow-up,
// Strouhal numbers) also "summary": {its numeric and null fields}, or "summary_error"
// naming what is wrong with that file.
absl::StatusOr<nlohmann::json> ReadRolloutCurve(const v1::Job& job);

// `relative` (components made by the caller: no "/", ".", ".." or empty ones) below the
// run folder `root`, under the rules above. Exposed for tests.
absl::StatusOr<std::string> ReadRunFolderFile(const std::string& root, const std::vector<std::string>& relative,
                                              size_t max_bytes);

}  // namespace gantry
