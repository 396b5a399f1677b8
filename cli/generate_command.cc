#include "cli/generate_command.h"

#include <optional>

#include "cli/number_flag.h"
#include "cli/submit_command.h"
#include "runspec/generate_spec_check.h"

namespace gantry::cli {
namespace {

// The whole-number options a generate may leave to gantry-worker generate's defaults.
// Each is checked against the range the coordinator and gantry-worker generate check
// (runspec/generate_spec_check.h) when the command line is parsed, quoting the value typed.
struct GenerateNumberFlag {
  const char* flag;
  const char* help;
  std::optional<int64_t> GenerateArgs::*value;
  IntRange range;
};

constexpr GenerateNumberFlag kGenerateNumberFlags[] = {
    {"count", "samples to draw (a DCGAN needs it unless --interpolate)", &GenerateArgs::count, kGenerateCount},
    {"checkpoint", "the run step of the checkpoint to use [worker default: the newest usable]",
     &GenerateArgs::checkpoint, kCheckpointStep},
    {"batch", "samples per generator call [worker default: 64]", &GenerateArgs::batch, kGenerateBatch},
    {"steps", "points of the --interpolate walk, both ends included", &GenerateArgs::steps, kGenerateWalkSteps},
    {"frame", "the --case frame to start from [worker default: 0]", &GenerateArgs::frame, kGenerateFrame},
};

}  // namespace

GenerateCommand::GenerateCommand(CLI::App& app)
    : Command(app, "generate",
              "queue samples from a finished run's generator (as gantry-worker generate, into RUN/generate-<name>/ "
              "of that run); prints its job id") {
  command_->add_option("id", args_.source_job_id, "the finished training job to sample, e.g. job-3")->required();
  for (const GenerateNumberFlag& number : kGenerateNumberFlags) {
    number_options_[number.flag] =
        command_->add_option(std::string("--") + number.flag, numbers_[number.flag], number.help)
            ->check(IntegerIn(number.range));
  }
  seed_option_ =
      command_->add_option("--seed", seed_, "seeds the latent vectors [worker default: 1]")->check(SeedValue());
  command_->add_option("--name", args_.name,
                       "the output folder RUN/generate-<name>/: letters, digits, . _ - [default: the job's id]");
  command_->add_option("--precision", args_.precision, "fp32 | bf16 [worker default: fp32]");
  command_->add_option("--interpolate", args_.interpolate, "A,B: a latent walk from row A to row B of the seeded draw");
  command_->add_option("--case", args_.case_dir,
                       "a Pix2Pix run: the flow case (inside a coordinator --data-root) it generates from");
  command_->add_option("--world-size", args_.world_size, "ranks to run it on (0: any group)")->default_val(0);
  command_->add_option("--max-attempts", args_.max_attempts, "times it may be handed to a group (0: coordinator's)")
      ->default_val(0);
  command_->add_option("--label", args_.label,
                       "a label shown in `gantry jobs` [default: samples of ID: generate-NAME]");
  command_->add_flag("--watch", args_.watch, "then watch it to the end (exit code as `gantry watch`)");
}

GenerateArgs GenerateCommand::Args() const {
  GenerateArgs args = args_;
  for (const GenerateNumberFlag& number : kGenerateNumberFlags) {
    // The validators have accepted the text, so it parses.
    if (number_options_.at(number.flag)->count() > 0) {
      args.*number.value = *ParseIntIn(number.flag, numbers_.at(number.flag), number.range);
    }
  }
  if (seed_option_->count() > 0) args.seed = *ParseSeed("--seed", seed_);
  return args;
}

int GenerateCommand::Run(Connection& client) {
  const GenerateArgs args = Args();
  return SubmitAndShow(client, BuildGenerateRequest(args), args.watch);
}

}  // namespace gantry::cli
