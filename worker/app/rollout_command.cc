#include "worker/app/rollout_command.h"

#include <cstdio>

#include "common/exit_codes.h"
#include "spdlog/spdlog.h"
#include "worker/app/logging.h"
#include "worker/app/process_group.h"

namespace gantry {

RolloutCommand::RolloutCommand(CLI::App& app) {
  command_ = app.add_subcommand("rollout",
                                "roll a trained next-frame model (--model pix2pix --dataset flow) out over a flow case "
                                "with tiled inference across the mpirun ranks; writes rollout.csv, rollout.md, "
                                "strip.png, errors.png");
  command_->add_option("--run", request_.run_dir, "the run folder (its newest usable checkpoint is used)")->required();
  command_->add_option("--case", request_.case_dir, "a flow case folder written by make-flow")->required();
  command_->add_option("--steps", request_.steps, "model steps to roll out (each --horizon frames of the run)")
      ->required()
      ->check(CLI::PositiveNumber);
  command_->add_option("--start-frame", request_.start_frame, "the true frame to start from [default: 0]")
      ->check(CLI::NonNegativeNumber);
  command_->add_option("--tile", request_.tile, "tile side; must be the model's --image-size [default: it]");
  command_->add_option("--overlap", request_.overlap, "cells shared by neighbouring tiles [default: tile / 4]");
  command_->add_option("--blend", request_.blend, "gaussian | linear | none [default: gaussian]");
  command_->add_option("--group", request_.group_size, "tiles per group; groups go to ranks in runs [default: 1]")
      ->check(CLI::PositiveNumber);
  command_->add_option("--tile-batch", request_.batch, "tiles per generator call [default: 4]")
      ->check(CLI::PositiveNumber);
  command_->add_option("--out", request_.out, "output folder [default: RUN/rollout-<case folder name>]");
}

int RolloutCommand::Run(int* argc, char*** argv) {
  absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return kExitFailure;
  }
  SetUpWorkerLogging(group->comm().rank());
  const absl::Status status = RunRolloutJob(group->comm(), request_);
  if (status.ok()) return kExitOk;
  // ABORTED: another rank's error, which that rank reports.
  if (group->comm().rank() == 0 || !absl::IsAborted(status)) spdlog::error("{}", std::string(status.message()));
  if (absl::IsInvalidArgument(status) || absl::IsNotFound(status) || absl::IsAborted(status)) return kExitUsage;
  group->Exit(kExitFailure);
}

}  // namespace gantry
