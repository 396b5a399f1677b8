// Runs the real gantry-worker binary for end-to-end tests, on tiny IDX folders made by
// the test (a few dozen images), so each run takes a second or two.
#pragma once

#include <string>

namespace gantry::testing {

struct WorkerResult {
  int exit_code = -1;  // -1: killed by a signal (an abort is a failure of its own)
  std::string output;  // stdout and stderr together
};

// `gantry-worker ARGS` (a shell word list), waited for.
WorkerResult RunWorkerBinary(const std::string& args);

// A fresh folder `name` under the test temp dir holding raw train-images/labels IDX
// files of `count` images of side x side pixels (bars, one label each).
std::string MakeIdxFolder(const std::string& name, int count, int side = 28);

// A path under the test temp dir that does not exist yet (for --out).
std::string FreshRunPath(const std::string& name);

std::string ReadFileText(const std::string& path);

}  // namespace gantry::testing
