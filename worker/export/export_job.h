// `gantry-worker export`: one network of a trained run (a checkpoint of its folder) as
// the state_dict of its PyTorch twin in a safetensors file (docs/export.md), for
// notebooks, PyTorch pipelines and serving systems.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace gantry {

struct ExportRequest {
  std::string run_dir;              // --run
  int64_t checkpoint_step = 0;      // --checkpoint: a run step; 0: the newest usable checkpoint
  std::string format = "safetensors";
  std::string network = "generator";  // generator | discriminator
  std::string dtype = "fp32";         // fp32 | bf16 (the weights; running statistics stay fp32)
  std::string out;                    // --out: a new file (never overwritten)
};

// Reads the run on this process alone (no collectives) and writes `out` atomically.
// INVALID_ARGUMENT (exit 2) for a bad request, naming the fix: an unknown format,
// network or dtype, an --out that exists or whose folder does not, a model without a
// PyTorch twin; NOT_FOUND / DATA_LOSS for a run without (usable) checkpoints or the
// checkpoint asked for (trained_run.h). `written` (optional) receives a one-line summary.
absl::Status RunExport(const ExportRequest& request, std::string* written = nullptr);

}  // namespace gantry
