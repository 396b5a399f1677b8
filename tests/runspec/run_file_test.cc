#include "runspec/run_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
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

std::string Message(const absl::StatusOr<RawSettings>& s) { return std::string(s.status().message()); }

TEST(RunFile, YamlWithListAndSnakeCase) {
  const std::string path = WriteTemp(
      "run.yaml", "dataset: mnist\ndata_dir: /x\nbatch-size: [64, 128]\nepochs: 2\nprecision: bf16\nloss_scale: 512\n");
  const auto raw = ReadRunFile(path);
  ASSERT_TRUE(raw.ok()) << raw.status();
  const auto c = ResolveTrainConfig(*raw);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(c->data_dir, "/x");
  EXPECT_EQ(c->mixed.precision, MathPrecision::kBf16);
  EXPECT_EQ(c->mixed.loss_scale.mode, LossScaleMode::kStatic);
  EXPECT_EQ(c->mixed.loss_scale.init_scale, 512.0f);
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

TEST(RunFile, KeysAreGivenOnce) {
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("dup.yaml", "epochs: 1\nepochs: 2\n"))),
              HasSubstr("setting 'epochs' is given twice"));
  // data_dir and data-dir name the same setting.
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("dup2.yaml", "data_dir: /a\ndata-dir: /b\n"))),
              HasSubstr("setting 'data-dir' is given twice"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("dup.json", R"({"seed": 1, "seed": 2})"))), HasSubstr("given twice"));
}

TEST(RunFile, ValuesAreScalarsOrFlatLists) {
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("null.yaml", "epochs:\n"))), HasSubstr("setting 'epochs' has no value"));
  // Found by the run_file fuzzer: empty strings, bare tags and empty lists passed as values.
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("empty.yaml", "model: ''\n"))), HasSubstr("setting 'model' has no value"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("tag.yaml", "model:\n  !x\n"))), HasSubstr("setting 'model' has no value"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("nolist.yaml", "batch-size: []\n"))), HasSubstr("is an empty list"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("hole.yaml", "batch-size: [64, '']\n"))),
              HasSubstr("setting 'batch-size' has an empty list entry"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("map.yaml", "epochs: {a: 1}\n"))), HasSubstr("not a mapping"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("nested.yaml", "batch-size: [[64], 128]\n"))),
              HasSubstr("list of plain values"));
  EXPECT_THAT(Message(ReadRunFile(WriteTemp("key.yaml", "[a]: 1\n"))), HasSubstr("every key must be a setting name"));
}

TEST(RunFile, DeepNestingIsRefusedAsNestingRatherThanACrash) {
  const std::string deep = "epochs: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  const absl::StatusOr<RawSettings> raw = ReadRunFile(WriteTemp("deep.yaml", deep));
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(raw), HasSubstr("deep.yaml: nested too deeply for the YAML parser (at line 1)"));
  EXPECT_THAT(Message(raw), HasSubstr("a run file is a flat mapping"));
  EXPECT_THAT(Message(raw), ::testing::Not(HasSubstr("bad file")));  // yaml-cpp's own words for it
  std::string indented;
  for (int i = 0; i < 3000; ++i) indented += std::string(2 * i, ' ') + "k:\n";
  EXPECT_THAT(Message(ParseRunFile(indented, "indented.yaml")), HasSubstr("indented.yaml: nested too deeply"));
}

TEST(RunFile, OnlySmallRegularFiles) {
  const std::string dir = ::testing::TempDir() + "/run_dir";
  std::filesystem::create_directories(dir);
  EXPECT_THAT(Message(ReadRunFile(dir)), HasSubstr("is a directory"));
  // A FIFO is refused at once instead of waiting for a writer.
  const std::string fifo = ::testing::TempDir() + "/run.fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(Message(ReadRunFile(fifo)), HasSubstr("not a regular file"));
  const std::string big = WriteTemp("big.yaml", "seed: 1\n# " + std::string(kMaxRunFileBytes, 'x') + "\n");
  EXPECT_THAT(Message(ReadRunFile(big)), HasSubstr("more than the 1048576 this file may hold"));
}

}  // namespace
}  // namespace gantry
