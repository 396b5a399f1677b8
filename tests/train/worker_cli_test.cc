// End-to-end: runs the gantry-worker binary on a tiny synthetic IDX dataset and checks
// the run folder, then checks that bad input fails with exit code 2 and a clear message.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "worker/data/npy.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Result {
  int exit_code;
  std::string output;
};

Result RunWorker(const std::string& args) {
  const std::string cmd = std::string(GANTRY_WORKER_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

void WriteBigEndian32(std::ofstream& f, uint32_t v) {
  const unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                              static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  f.write(reinterpret_cast<const char*>(b), 4);
}

// Writes raw (not gzipped) train-images/labels with `count` 28x28 images of bars.
std::string MakeTinyMnist(const std::string& name, int count) {
  const std::string dir = ::testing::TempDir() + "/cli_data_" + name;
  fs::create_directories(dir);
  std::ofstream images(dir + "/train-images-idx3-ubyte", std::ios::binary);
  WriteBigEndian32(images, 2051);
  WriteBigEndian32(images, count);
  WriteBigEndian32(images, 28);
  WriteBigEndian32(images, 28);
  for (int i = 0; i < count; ++i) {
    for (int p = 0; p < 28 * 28; ++p) images.put(static_cast<char>((p % 28) == (i % 28) ? 255 : 0));
  }
  std::ofstream labels(dir + "/train-labels-idx1-ubyte", std::ios::binary);
  WriteBigEndian32(labels, 2049);
  WriteBigEndian32(labels, count);
  for (int i = 0; i < count; ++i) labels.put(static_cast<char>(i % 10));
  return dir;
}

std::string FreshRunDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/cli_run_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string ReadAll(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

TEST(WorkerCli, TrainsAndWritesTheRunFolder) {
  const std::string data = MakeTinyMnist("ok", 40);
  const std::string out = FreshRunDir("ok");
  const Result r = RunWorker("train --dataset mnist --data-dir " + data + " --epochs 2 --batch-size 16 --out " + out +
                             " --progress-seconds 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("samples/s"));  // progress lines
  EXPECT_THAT(r.output, HasSubstr(out));          // says where things went

  const auto manifest = nlohmann::json::parse(ReadAll(out + "/run.json"));
  EXPECT_EQ(manifest["config"]["dataset"], "mnist");
  EXPECT_EQ(manifest["config"]["batch_sizes"][0], 16);

  std::istringstream csv(ReadAll(out + "/epochs.csv"));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(csv, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);  // header + 2 epochs
  EXPECT_THAT(lines[1], testing::StartsWith("16,1,"));
  EXPECT_THAT(lines[2], testing::StartsWith("16,2,"));

  EXPECT_GT(fs::file_size(out + "/samples/epoch_002.png"), 100u);
  const auto samples = ReadNpy(out + "/samples/epoch_002.npy");
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->shape, (std::vector<int64_t>{64, 1, 28, 28}));
  for (float v : samples->data) ASSERT_TRUE(v >= -1.0f && v <= 1.0f);
  EXPECT_THAT(ReadAll(out + "/log.txt"), HasSubstr("epoch 2 done"));
}

TEST(WorkerCli, SweepAndRunFile) {
  const std::string data = MakeTinyMnist("sweep", 40);
  const std::string out = FreshRunDir("sweep");
  const std::string yaml = ::testing::TempDir() + "/sweep.yaml";
  std::ofstream(yaml) << "dataset: mnist\ndata-dir: " << data << "\nbatch-size: [8, 16]\nepochs: 1\nmax-steps: 2\n";
  const Result r = RunWorker("train --config " + yaml + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = ReadAll(out + "/epochs.csv");
  EXPECT_THAT(csv, HasSubstr("\n8,1,"));
  EXPECT_THAT(csv, HasSubstr("\n16,1,"));
  EXPECT_TRUE(fs::exists(out + "/samples/b0008/epoch_001.png"));
  EXPECT_TRUE(fs::exists(out + "/samples/b0016/epoch_001.npy"));
}

TEST(WorkerCli, BadInputExitsWithTwoAndSaysWhy) {
  const std::string data = MakeTinyMnist("bad", 20);
  Result r = RunWorker("train --batch-size 0 --out " + FreshRunDir("bad0"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--batch-size: bad value '0'"));

  r = RunWorker("train --dataset mnist --data-dir /nonexistent/mnist --out " + FreshRunDir("bad1"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/mnist"));

  r = RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 64 --out " + FreshRunDir("bad2"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("exceeds the 20 training images"));

  const std::string out = FreshRunDir("twice");
  ASSERT_EQ(RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 10 --max-steps 1 --out " + out)
                .exit_code,
            0);
  r = RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 10 --out " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("already holds a run"));

  r = RunWorker("train --config /nonexistent/run.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/run.yaml: cannot open run file"));

  r = RunWorker("train --no-such-flag 1");
  EXPECT_NE(r.exit_code, 0);
  r = RunWorker("train --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("--data-dir"));
}

}  // namespace
}  // namespace gantry
