#include "tests/testing/training_fixtures.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "gtest/gtest.h"
#include "worker/comm/local_communicator.h"
#include "worker/models/model_registry.h"
#include "worker/tensor/random.h"
#include "worker/train/batch_run.h"

namespace gantry::testing {

ImageDataset TinyImages(int64_t count) {
  ImageDataset data;
  data.count = count;
  data.height = data.width = 28;
  Rng rng(5);
  data.pixels.resize(static_cast<size_t>(count * data.sample_numel()));
  for (float& p : data.pixels) p = static_cast<float>(2.0 * rng.Uniform() - 1.0);
  data.labels.assign(static_cast<size_t>(count), 0);
  return data;
}

TrainConfig QuickRunConfig(const std::string& out) {
  TrainConfig c;
  c.batch_sizes = {4};
  c.epochs = 2;
  c.checkpoint_every_steps = 4;
  c.progress_seconds = 1e6;
  c.out = out;
  return c;
}

TrainingState FreshState(const TrainConfig& config, const ImageDataset& data) {
  std::unique_ptr<Communicator> comm = LocalGroup(1).Rank(0);
  BatchRun run(config, *MakeModel(config), data.count, 0, 1, Clock::Real());
  run.model->Initialize(config.init, config.seed);
  run.g_opt = *MakeOptimizer(config.optimizer, run.model->g_params().num_params());
  run.d_opt = *MakeOptimizer(config.optimizer, run.model->d_params().num_params());
  run.step = std::make_unique<DataParallelStep>(*run.model, *run.g_opt, *run.d_opt, *comm, CpuBackend(), CommOptions{},
                                                false, Clock::Real());
  return CaptureBatchRun(run, EpochInProgress{}, config.seed, data.count, 1);
}

std::string FreshTestDir(const std::string& name) {
  // Unique per call (mkdtemp), so two processes running the same test never share it.
  std::string pattern = ::testing::TempDir() + "/ckpt_" + name + "_XXXXXX";
  std::filesystem::create_directories(::testing::TempDir());
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
  return pattern;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace gantry::testing
