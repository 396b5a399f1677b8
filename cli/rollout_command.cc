#include "cli/rollout_command.h"

#include <optional>

#include "cli/submit_command.h"

namespace gantry::cli {
namespace {

// The whole-number options a rollout may leave to gantry-worker rollout's defaults.
struct OptionalNumber {
  const char* flag;
  const char* help;
  std::optional<int64_t> RolloutArgs::*value;
};

constexpr OptionalNumber kOptionalNumbers[] = {
    {"start-frame", "the true frame to start from [worker default: 0]", &RolloutArgs::start_frame},
    {"tile", "tile side; must be the model's --image-size [worker default: it]", &RolloutArgs::tile},
    {"overlap", "cells shared by neighbouring tiles [worker default: tile / 4]", &RolloutArgs::overlap},
    {"group", "tiles per group; groups go to ranks in runs [worker default: 1]", &RolloutArgs::group},
    {"tile-batch", "tiles per generator call [worker default: 4]", &RolloutArgs::tile_batch},
    {"report-every", "rows of rollout.csv/.md for every Kth step and the last [worker default: 1]",
     &RolloutArgs::report_every},
};

}  // namespace

RolloutCommand::RolloutCommand(CLI::App& app)
    : Command(app, "rollout",
              "queue a rollout of a finished pix2pix flow run over a flow case (as gantry-worker rollout, into "
              "RUN/rollout-<case>-<job id>/ of that run); prints its job id") {
  command_->add_option("id", args_.source_job_id, "the finished training job to roll out, e.g. job-3")->required();
  command_->add_option("--case", args_.case_dir, "a flow case folder (make-flow) inside a coordinator --data-root")
      ->required();
  command_->add_option("--steps", args_.steps, "model steps to roll out")->required();
  for (const OptionalNumber& number : kOptionalNumbers) {
    number_options_[number.flag] =
        command_->add_option(std::string("--") + number.flag, numbers_[number.flag], number.help);
  }
  command_->add_option("--blend", args_.blend, "gaussian | linear | none [worker default: gaussian]");
  command_->add_option("--world-size", args_.world_size, "ranks to run it on (0: any group)")->default_val(0);
  command_->add_option("--max-attempts", args_.max_attempts, "times it may be handed to a group (0: coordinator's)")
      ->default_val(0);
  command_->add_option("--name", args_.name, "a label shown in `gantry jobs` [default: rollout of ID: CASE]");
  command_->add_flag("--watch", args_.watch, "then watch it to the end (exit code as `gantry watch`)");
}

RolloutArgs RolloutCommand::Args() const {
  RolloutArgs args = args_;
  for (const OptionalNumber& number : kOptionalNumbers) {
    if (number_options_.at(number.flag)->count() > 0) args.*number.value = numbers_.at(number.flag);
  }
  return args;
}

int RolloutCommand::Run(Connection& client) {
  const RolloutArgs args = Args();
  return SubmitAndShow(client, BuildRolloutRequest(args), args.watch);
}

}  // namespace gantry::cli
