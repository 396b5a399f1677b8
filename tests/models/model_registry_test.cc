#include "worker/models/model_registry.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/model_config.h"
#include "worker/models/dcgan.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(ModelRegistry, BuildsExactlyTheModelsTheSpecNames) {
  // The coordinator and the CLI accept spec's names without linking a model: a name in
  // one list and not the other would pass validation and fail on the workers, or the reverse.
  EXPECT_EQ(RegisteredModels(), ModelNames());
  for (const std::string& name : ModelNames()) {
    TrainConfig config;
    config.model = name;
    absl::StatusOr<std::unique_ptr<GanModel>> model = MakeModel(config);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ((*model)->name(), name);
    EXPECT_GT((*model)->g_params().num_params(), 0);
    EXPECT_GT((*model)->d_params().num_params(), 0);
  }
}

TEST(ModelRegistry, UnknownModelNamesTheKnownOnes) {
  TrainConfig config;
  config.model = "stylegan";
  const absl::StatusOr<std::unique_ptr<GanModel>> model = MakeModel(config);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("--model stylegan"));
  EXPECT_THAT(model.status().message(), HasSubstr("dcgan"));
}

TEST(Dcgan, StepInputsSliceOneGlobalNoiseBatch) {
  // Two ranks holding rows [0,3) and [3,8) of a global batch of 8 get the rows a single
  // rank would, and their noise streams stay in step.
  const Dcgan model{DcganConfig{}};
  EXPECT_EQ(model.SampleShape(), (Shape{1, 28, 28}));
  Rng whole_rng(7), first_rng(7), second_rng(7);
  const GanInputs whole = model.StepInputs(Tensor::Zeros(Shape{8, 1, 28, 28}), whole_rng, 8, 0, 8, Device::kCpu);
  const GanInputs first = model.StepInputs(Tensor::Zeros(Shape{3, 1, 28, 28}), first_rng, 8, 0, 3, Device::kCpu);
  const GanInputs second = model.StepInputs(Tensor::Zeros(Shape{5, 1, 28, 28}), second_rng, 8, 3, 8, Device::kCpu);
  ASSERT_EQ(whole.generator_input.shape(), (Shape{8, 100}));
  ASSERT_EQ(first.generator_input.shape(), (Shape{3, 100}));
  ASSERT_EQ(second.generator_input.shape(), (Shape{5, 100}));
  for (int64_t i = 0; i < 3 * 100; ++i) EXPECT_EQ(first.generator_input.data()[i], whole.generator_input.data()[i]);
  for (int64_t i = 0; i < 5 * 100; ++i) {
    EXPECT_EQ(second.generator_input.data()[i], whole.generator_input.data()[300 + i]);
  }
  EXPECT_EQ(first_rng.state(), whole_rng.state());
  EXPECT_EQ(second_rng.state(), whole_rng.state());
}

}  // namespace
}  // namespace gantry
