#include "worker/app/export_command.h"

#include <cstdio>

#include "common/exit_codes.h"
#include "runspec/generate_spec_check.h"

namespace gantry {

ExportCommand::ExportCommand(CLI::App& app) {
  command_ = app.add_subcommand("export",
                                "write a trained network as the state_dict of its PyTorch twin in a safetensors file "
                                "(docs/export.md)");
  command_->add_option("--run", request_.run_dir, "the run folder")->required();
  numbers_ = std::make_unique<NumberFlags>(command_);
  numbers_->Int("--checkpoint", &request_.checkpoint_step, kCheckpointStep,
                "the run step of the checkpoint to export [default: the newest usable one]");
  // Values are checked by RunExport, so a bad one exits 2 naming the fix (as every refusal).
  command_->add_option("--format", request_.format, "safetensors")->required();
  command_->add_option("--network", request_.network, "generator | discriminator [default: generator]");
  command_->add_option("--dtype", request_.dtype,
                       "fp32 | bf16: the weights' type (running statistics stay fp32) [default: fp32]");
  command_->add_option("--out", request_.out, "the file to write (a new one: never overwritten)")->required();
}

int ExportCommand::Run() {
  std::string written;
  absl::Status status = numbers_->Parse();
  if (status.ok()) status = RunExport(request_, &written);
  if (status.ok()) {
    std::printf("%s\n", written.c_str());
    return kExitOk;
  }
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  const bool usage = absl::IsInvalidArgument(status) || absl::IsNotFound(status) || absl::IsDataLoss(status);
  return usage ? kExitUsage : kExitFailure;
}

}  // namespace gantry
