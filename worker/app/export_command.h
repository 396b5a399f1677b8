// `gantry-worker export --run RUN [--checkpoint N] --format safetensors [--network
// generator|discriminator] [--dtype fp32|bf16] --out FILE`: a trained network as its
// PyTorch twin's state_dict (worker/export/export_job.h, docs/export.md).
#pragma once

#include <memory>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"
#include "worker/export/export_job.h"

namespace gantry {

class ExportCommand {
 public:
  explicit ExportCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  // Exit codes: 0 written; 2 a bad request, a run without usable checkpoints, an --out
  // that exists; 1 a failure while writing.
  int Run();

 private:
  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  ExportRequest request_;
};

}  // namespace gantry
