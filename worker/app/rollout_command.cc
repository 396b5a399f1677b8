#include "worker/app/rollout_command.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include "common/exit_codes.h"
#include "runspec/rollout_spec_check.h"
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
  // The numbers' ranges are the coordinator's too (runspec/rollout_spec_check.h).
  numbers_ = std::make_unique<NumberFlags>(command_);
  NumberFlags& n = *numbers_;
  n.Int("--steps", &request_.steps, kRolloutSteps, "model steps to roll out (each --horizon frames of the run)");
  command_->get_option("--steps")->required();
  n.Int("--start-frame", &request_.start_frame, kRolloutStartFrame, "the true frame to start from [default: 0]");
  n.Int("--tile", &request_.tile, kRolloutTile, "tile side; must be the model's --image-size [default: it]");
  n.Int("--overlap", &request_.overlap, kRolloutOverlap, "cells shared by neighbouring tiles [default: tile / 4]");
  command_->add_option("--blend", request_.blend, "gaussian | linear | none [default: gaussian]");
  n.Int("--group", &request_.group_size, kRolloutGroup, "tiles per group; groups go to ranks in runs [default: 1]");
  n.Int("--tile-batch", &request_.batch, kRolloutTileBatch, "tiles per generator call [default: 4]");
  n.Int("--report-every", &request_.report_every, kRolloutReportEvery,
        "rows of rollout.csv and rollout.md for every Kth step and the last (the summary, the plot and the strip "
        "still see every step) [default: 1]");
  command_->add_option("--out", request_.out,
                       "a new (or empty) output folder [default: RUN/rollout-<case folder name>]; a rollout never "
                       "writes over files");
}

namespace {

constexpr double kProgressSeconds = 5;

// Rank 0's progress of a long rollout: a line at most every kProgressSeconds, and the last step's.
std::function<void(int64_t, double)> ProgressLines(int64_t steps) {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [last, steps](int64_t step, double tiles_per_second) {
    const auto now = std::chrono::steady_clock::now();
    if (step < steps && std::chrono::duration<double>(now - *last).count() < kProgressSeconds) return;
    *last = now;
    spdlog::info("rollout step {}/{}: {:.1f} tiles/s", step, steps, tiles_per_second);
  };
}

}  // namespace

int RolloutCommand::Run(int* argc, char*** argv) {
  if (absl::Status s = numbers_->Parse(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return kExitFailure;
  }
  SetUpWorkerLogging(group->comm().rank());
  request_.on_step = ProgressLines(request_.steps);
  const absl::Status status = RunRolloutJob(group->comm(), request_);
  if (status.ok()) return kExitOk;
  // ABORTED: another rank's error, which that rank reports.
  if (group->comm().rank() == 0 || !absl::IsAborted(status)) spdlog::error("{}", std::string(status.message()));
  if (absl::IsInvalidArgument(status) || absl::IsNotFound(status) || absl::IsAborted(status)) return kExitUsage;
  group->Exit(kExitFailure);
}

}  // namespace gantry
