// gantry-worker: trains GANs (train), serves a worker pool (serve), checks
// checkpoints (inspect-checkpoint), trains quality judges (train-judge), generates flow
// data (make-flow), packs folders of images (make-dataset), rolls flow models out
// (rollout), draws samples from trained runs (generate) and exports their networks
// (export). Each subcommand is one file in
// worker/app/; this is the only main().
#include <string>

#include "CLI/CLI.hpp"
#include "common/exit_codes.h"
#include "worker/app/export_command.h"
#include "worker/app/generate_command.h"
#include "worker/app/inspect_command.h"
#include "worker/app/judge_command.h"
#include "worker/app/make_dataset_command.h"
#include "worker/app/make_flow_command.h"
#include "worker/app/rollout_command.h"
#include "worker/app/serve_command.h"
#include "worker/app/train_command.h"

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-worker: trains GANs with synchronous data-parallel SGD"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gantry-worker ") + GANTRY_VERSION);
  TrainCommand train(app);
  InspectCommand inspect(app);
  JudgeCommand judge(app);  // the quality judge of a dataset (--quality)
  ServeCommand serve(app);  // the worker pool mode (worker/pool)
  MakeFlowCommand make_flow(app);  // flow data from the lattice Boltzmann solver (worker/flow)
  MakeDatasetCommand make_dataset(app);  // a folder of images packed for training (worker/data)
  RolloutCommand rollout(app);
  GenerateCommand generate(app);  // samples from a trained run (worker/generate)
  ExportCommand export_command(app);  // a trained network for PyTorch (worker/export)
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end with 0; every other parse error is a usage error, exit 2
    // (not CLI11's own codes, 105 and the like), as for every subcommand's own refusals.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (inspect.selected()) return inspect.Run();
  if (judge.selected()) return judge.Run();
  if (serve.selected()) return serve.Run(&argc, &argv);
  if (make_flow.selected()) return make_flow.Run(&argc, &argv);
  if (make_dataset.selected()) return make_dataset.Run();
  if (rollout.selected()) return rollout.Run(&argc, &argv);
  if (generate.selected()) return generate.Run(&argc, &argv);
  if (export_command.selected()) return export_command.Run();
  return train.Run(&argc, &argv);
}
