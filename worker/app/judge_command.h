// `gantry-worker train-judge --dataset mnist|fashion-mnist [--data-dir DIR]`: trains the
// dataset's quality judge once (judge.h), prints its test accuracy, and caches it where
// runs find it (judge_store.h), unless its accuracy is below the dataset's threshold.
// `--dataset images --data-dir FILE` trains one on a packed image set's class folders
// (a tenth of its images held out as the test images); runs with that --data-dir then
// score with it instead of the label-free score.
// Exit 0: a judge is cached (trained now, or already there); 1: the judge trained but
// is not good enough (nothing cached); 2: bad input (unknown dataset, missing files).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"

namespace gantry {

class JudgeCommand {
 public:
  explicit JudgeCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  int Run();

 private:
  int RunImages(const std::string& file);

  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  std::string dataset_ = "fashion-mnist";
  std::string data_dir_;
  int64_t epochs_ = 2;
  uint64_t seed_ = 1;
  double min_accuracy_ = -1;  // < 0: the dataset's default
  bool retrain_ = false;
};

}  // namespace gantry
