#include "worker/train/train_config.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(TrainConfig, DefaultsAreThePapers) {
  const auto c = ResolveTrainConfig({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dataset, "fashion-mnist");
  EXPECT_EQ(c->batch_sizes, std::vector<int64_t>{64});
  EXPECT_FLOAT_EQ(c->optimizer.lr, 1e-4f);
  EXPECT_EQ(c->optimizer.kind, "adam");
  EXPECT_FLOAT_EQ(c->dcgan.bn_eps, 1e-3f);
  EXPECT_EQ(EffectiveDataDir(*c), "/usr/share/datasets/fashion-mnist");
}

TEST(TrainConfig, ParsesEverySetting) {
  const auto c = ResolveTrainConfig({{"dataset", "mnist"},   {"data-dir", "/d"},   {"epochs", "3"},
                                     {"batch-size", "64, 128,256"}, {"optimizer", "sgd"}, {"lr", "0.01"},
                                     {"momentum", "0.5"},    {"seed", "42"},       {"max-steps", "10"},
                                     {"init", "normal"},     {"dropout", "0"},     {"out", "/tmp/r"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{64, 128, 256}));
  EXPECT_EQ(c->epochs, 3);
  EXPECT_EQ(c->optimizer.kind, "sgd");
  EXPECT_FLOAT_EQ(c->optimizer.momentum, 0.5f);
  EXPECT_EQ(c->seed, 42u);
  EXPECT_EQ(c->init, InitScheme::kNormal002);
  EXPECT_EQ(EffectiveDataDir(*c), "/d");
}

TEST(TrainConfig, BadValuesNameTheSetting) {
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "0"}}).status().message(), HasSubstr("--batch-size: bad value '0'"));
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "64,x"}}).status().message(), HasSubstr("--batch-size"));
  EXPECT_THAT(ResolveTrainConfig({{"epochs", "-1"}}).status().message(), HasSubstr("--epochs"));
  EXPECT_THAT(ResolveTrainConfig({{"lr", "nan"}}).status().message(), HasSubstr("--lr"));
  EXPECT_THAT(ResolveTrainConfig({{"dataset", "cifar"}}).status().message(),
              HasSubstr("one of mnist, fashion-mnist"));
  EXPECT_THAT(ResolveTrainConfig({{"nope", "1"}}).status().message(), HasSubstr("unknown setting 'nope'"));
}

TEST(RunFile, YamlWithListAndSnakeCase) {
  const std::string path = WriteTemp("run.yaml", "dataset: mnist\ndata_dir: /x\nbatch-size: [64, 128]\nepochs: 2\n");
  const auto raw = ReadRunFile(path);
  ASSERT_TRUE(raw.ok()) << raw.status();
  const auto c = ResolveTrainConfig(*raw);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(c->data_dir, "/x");
}

TEST(RunFile, JsonWorksToo) {
  const std::string path = WriteTemp("run.json", R"({"dataset": "mnist", "batch-size": "32", "seed": 3})");
  const auto c = ResolveTrainConfig(*ReadRunFile(path));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, std::vector<int64_t>{32});
}

TEST(RunFile, ErrorsNameTheFileAndKey) {
  EXPECT_THAT(ReadRunFile("/nonexistent/run.yaml").status().message(), HasSubstr("cannot open run file"));
  EXPECT_THAT(ReadRunFile(WriteTemp("bad.yaml", "epochs: [1\n")).status().message(), HasSubstr("not valid YAML"));
  EXPECT_THAT(ReadRunFile(WriteTemp("unk.yaml", "epoch: 3\n")).status().message(), HasSubstr("unknown setting 'epoch'"));
  EXPECT_THAT(ReadRunFile(WriteTemp("list.yaml", "- 1\n- 2\n")).status().message(), HasSubstr("mapping"));
}

}  // namespace
}  // namespace gantry
