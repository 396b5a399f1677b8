#include "worker/app/generate_command.h"

#include <csignal>
#include <cstdio>

#include "common/exit_codes.h"
#include "runspec/generate_spec_check.h"
#include "spdlog/spdlog.h"
#include "worker/app/logging.h"
#include "worker/app/process_group.h"
#include "worker/pool/stop_signals.h"

namespace gantry {

GenerateCommand::GenerateCommand(CLI::App& app) {
  command_ = app.add_subcommand("generate",
                                "draw samples from a trained run's generator (eval-mode BatchNorm) across the mpirun "
                                "ranks; writes DIR/sample-*.png, grid.png, samples.npy, inputs.npy, generate.json");
  command_->add_option("--run", request_.run_dir, "the run folder")->required();
  // The numbers' ranges are the coordinator's too (runspec/generate_spec_check.h).
  numbers_ = std::make_unique<NumberFlags>(command_);
  NumberFlags& n = *numbers_;
  n.Int("--checkpoint", &request_.checkpoint_step, kCheckpointStep,
        "the run step of the checkpoint to use [default: the newest usable one]");
  // Everything else is checked by RunGenerateJob, so a bad value exits 2 naming the fix.
  n.Int("--count", &count_, kGenerateCount,
        "samples to generate (a next-frame model: --case frames from --frame) [default: a next-frame model's --case: "
        "1; --noise-file and --condition: their rows]");
  command_->add_option("--out", request_.out, "a new (or empty) folder for the samples")->required();
  n.Seed("--seed", &request_.latent.seed, "seeds the latent vectors [default: 1]");
  command_->add_option("--noise-file", request_.latent.noise_file,
                       "a .npy of latent vectors [N, noise_dim] to generate from instead of seeded ones");
  command_->add_option("--interpolate", request_.latent.interpolate,
                       "A,B: a walk (spherical) from latent row A to row B of the seeded or --noise-file rows");
  n.Int("--steps", &request_.latent.steps, kGenerateWalkSteps, "points of the --interpolate walk, both ends included");
  command_->add_option("--condition", request_.condition.condition_file,
                       "a next-frame model: a .npy of condition frames [N, 4, S, S] (normalised ux, uy, vorticity, "
                       "obstacle mask)");
  command_->add_option("--case", request_.condition.case_dir, "a next-frame model: a flow case folder (make-flow)");
  n.Int("--frame", &request_.condition.frame, kGenerateFrame, "the --case frame to start from [default: 0]");
  command_->add_option("--precision", request_.precision, "fp32 | bf16: the matrix products' operands [default: fp32]");
  n.Int("--batch", &request_.batch, kGenerateBatch,
        "samples per generator call; the result is the same on any number of ranks for one --batch [default: 64]");
}

int GenerateCommand::Run(int* argc, char*** argv) {
  if (absl::Status s = numbers_->Parse(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  request_.latent.count = count_;
  request_.condition.count = count_;
  absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return kExitFailure;
  }
  SetUpWorkerLogging(group->comm().rank());
  // SIGTERM or SIGINT (mpirun forwards them to every rank) stops the ranks together
  // between generator calls or files, and the staging folder is removed; a second one
  // ends the process at once.
  InstallStopSignalHandlers();
  request_.should_stop = [] { return StopSignal() != 0; };
  GenerateJobEnd end;
  const absl::Status status = RunGenerateJob(group->comm(), request_, &end);
  if (status.ok()) return kExitOk;
  if (absl::IsCancelled(status)) {
    if (group->comm().rank() == 0) spdlog::error("{}; nothing was written", std::string(status.message()));
    group->Exit(ExitCodeForSignal(StopSignal() != 0 ? StopSignal() : SIGTERM));
  }
  // ABORTED: another rank's error, which that rank reports.
  if (group->comm().rank() == 0 || !absl::IsAborted(status)) spdlog::error("{}", std::string(status.message()));
  // Rank 0's publish refuses an --out that something took meanwhile (another generate's):
  // refused input too, after the work.
  if (end.stage == GenerateStage::kWriting && absl::IsInvalidArgument(status)) return kExitUsage;
  const bool refused = end.stage == GenerateStage::kPreparing && !end.collective_failed;
  if (refused && (absl::IsInvalidArgument(status) || absl::IsNotFound(status) || absl::IsAborted(status) ||
                  absl::IsDataLoss(status))) {
    return kExitUsage;
  }
  group->Exit(kExitFailure);
}

}  // namespace gantry
