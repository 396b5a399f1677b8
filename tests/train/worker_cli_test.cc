// End-to-end: runs the gantry-worker binary on a tiny synthetic IDX dataset and checks
// the run folder, then checks that bad input fails with exit code 2 and a clear message.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>

#include "common/file_io.h"
#include "common/record_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensorboard/event.pb.h"
#include "tests/testing/png_decode.h"
#include "tests/testing/tensorboard_events.h"
#include "worker/formats/npy.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

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

void WriteIdxWord(std::ofstream& f, uint32_t v) {
  const unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                              static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  f.write(reinterpret_cast<const char*>(b), 4);
}

// Writes raw (not gzipped) train-images/labels with `count` 28x28 images of bars.
std::string MakeTinyMnist(const std::string& name, int count) {
  const std::string dir = ::testing::TempDir() + "/cli_data_" + name;
  fs::create_directories(dir);
  std::ofstream images(dir + "/train-images-idx3-ubyte", std::ios::binary);
  WriteIdxWord(images, 2051);
  WriteIdxWord(images, count);
  WriteIdxWord(images, 28);
  WriteIdxWord(images, 28);
  for (int i = 0; i < count; ++i) {
    for (int p = 0; p < 28 * 28; ++p) images.put(static_cast<char>((p % 28) == (i % 28) ? 255 : 0));
  }
  std::ofstream labels(dir + "/train-labels-idx1-ubyte", std::ios::binary);
  WriteIdxWord(labels, 2049);
  WriteIdxWord(labels, count);
  for (int i = 0; i < count; ++i) labels.put(static_cast<char>(i % 10));
  return dir;
}

std::vector<std::string> Split(const std::string& csv_line) {
  std::vector<std::string> fields;
  std::istringstream in(csv_line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

std::string FreshRunDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/cli_run_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string ReadCliFile(const std::string& path) {
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

  const auto manifest = nlohmann::json::parse(ReadCliFile(out + "/run.json"));
  EXPECT_EQ(manifest["config"]["dataset"], "mnist");
  EXPECT_EQ(manifest["config"]["batch_sizes"][0], 16);

  std::istringstream csv(ReadCliFile(out + "/epochs.csv"));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(csv, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);  // header + 2 epochs
  EXPECT_THAT(lines[1], ::testing::StartsWith("16,1,"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("16,2,"));

  EXPECT_GT(fs::file_size(out + "/samples/epoch_002.png"), 100u);
  const auto samples = ReadNpy(out + "/samples/epoch_002.npy");
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->shape, (std::vector<int64_t>{64, 1, 28, 28}));
  for (float v : samples->data) ASSERT_TRUE(v >= -1.0f && v <= 1.0f);
  EXPECT_THAT(ReadCliFile(out + "/log.txt"), HasSubstr("epoch 2 done"));
}

// --tensorboard, energy and the plots, end to end: each batch size's event file holds the
// version record, the step and epoch scalars and one image per epoch, with good CRCs;
// epochs.csv has the energy of every epoch; timing.png and losses.png decode.
TEST(WorkerCli, TensorBoardEnergyAndPlots) {
  const std::string data = MakeTinyMnist("monitor", 40);
  const std::string out = FreshRunDir("monitor");
  const Result r = RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 8,16 --epochs 2 --max-steps 3 "
                             "--tensorboard --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("energy per epoch from "));
  // Batch 8: 5 steps per epoch, so the 3 steps are one epoch; batch 16: 2 per epoch, 2 epochs.
  for (const auto& [batch, epochs] : std::vector<std::pair<std::string, int>>{{"b8", 1}, {"b16", 2}}) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(out + "/tensorboard/" + batch)) files.push_back(e.path().string());
    ASSERT_EQ(files.size(), 1u) << batch;
    absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(files[0]);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<std::vector<std::string>> records = ReadRecords(*bytes, files[0]);
    ASSERT_TRUE(records.ok()) << records.status();
    std::map<std::string, int> tags;
    int64_t last_image_step = 0;
    for (const std::string& record : *records) {
      tensorboard::Event e;
      ASSERT_TRUE(e.ParseFromString(record));
      for (const auto& v : e.summary().value()) {
        ++tags[v.tag()];
        if (v.has_image()) {
          last_image_step = e.step();
          ASSERT_TRUE(testing_png::DecodeRgb(v.image().encoded_image_string()).has_value());
          EXPECT_EQ(v.image().colorspace(), 1);  // the grey sample grid
        }
      }
    }
    tensorboard::Event first;
    ASSERT_TRUE(first.ParseFromString((*records)[0]));
    EXPECT_EQ(first.file_version(), "brain.Event:2");
    EXPECT_EQ(tags["loss/d"], 3) << batch;  // --max-steps 3
    EXPECT_EQ(tags["loss/g"], 3);
    EXPECT_EQ(tags["loss_scale/g"], 3);
    EXPECT_EQ(tags["epoch/seconds"], epochs);
    EXPECT_EQ(tags["epoch/energy_j"], epochs);
    EXPECT_EQ(tags["epoch/energy_j_per_sample"], epochs);
    EXPECT_EQ(tags["epoch/step_p99_ms"], epochs);
    EXPECT_EQ(tags["samples"], epochs);
    EXPECT_EQ(last_image_step, 3);
  }
  std::istringstream csv(ReadCliFile(out + "/epochs.csv"));
  std::string header, row;
  std::getline(csv, header);
  const std::vector<std::string> names = Split(header);
  const auto energy = std::find(names.begin(), names.end(), "energy_j");
  ASSERT_NE(energy, names.end()) << header;
  EXPECT_EQ(*(energy + 1), "energy_j_per_sample");
  EXPECT_EQ(*(energy + 2), "energy_estimated");
  while (std::getline(csv, row)) {
    const std::vector<std::string> fields = Split(row);
    ASSERT_EQ(fields.size(), names.size()) << row;
    EXPECT_GT(std::stod(fields[energy - names.begin()]), 0.0) << row;
    // A CPU run: RAPL (2) where readable, else the estimate (1).
    const auto source = std::find(names.begin(), names.end(), "energy_source");
    ASSERT_NE(source, names.end()) << header;
    EXPECT_THAT(fields[source - names.begin()], ::testing::AnyOf("1", "2")) << row;
  }
  EXPECT_THAT(ReadCliFile(out + "/timing.md"), HasSubstr("## Energy"));
  for (const char* plot : {"/timing.png", "/losses.png"}) {
    absl::StatusOr<std::vector<uint8_t>> png = ReadFileBytes(out + plot);
    ASSERT_TRUE(png.ok()) << png.status();
    EXPECT_TRUE(testing_png::DecodeRgb(std::string(png->begin(), png->end())).has_value()) << plot;
  }
}

// Train and t10k IDX files where class c is a vertical bar at column 2c+4 (or, with
// `random_labels`, labels unrelated to the images: nothing to learn).
std::string MakeJudgeableMnist(const std::string& name, int count, bool random_labels) {
  const std::string dir = ::testing::TempDir() + "/cli_judge_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const std::string prefix : {"train", "t10k"}) {
    std::ofstream images(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
    WriteIdxWord(images, 2051);
    WriteIdxWord(images, count);
    WriteIdxWord(images, 28);
    WriteIdxWord(images, 28);
    std::ofstream labels(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
    WriteIdxWord(labels, 2049);
    WriteIdxWord(labels, count);
    for (int i = 0; i < count; ++i) {
      const int c = (i * 7 + (prefix == "t10k" ? 3 : 0)) % 10;
      for (int p = 0; p < 28 * 28; ++p) images.put(static_cast<char>((p % 28) == 2 * c + 4 ? 255 : 0));
      labels.put(static_cast<char>(random_labels ? (i * 13 + i / 10) % 10 : c));
    }
  }
  return dir;
}

// Time to quality on a judged data set (`common`: the train settings): a sweep with a
// target every epoch meets (any distance is <= 1e6) stops each batch size at its first
// epoch under --stop-at-target and reports it in timing.md, as an upper bound (no earlier
// score); a target no run meets says "never"; the learning rate per batch size is there.
void ExpectTimeToTarget(const std::string& common) {
  const std::string sweep = "train --dataset mnist --data-dir " + ::testing::TempDir() +
                            "/cli_judge_ok --batch-size 8,16 --epochs 2 --limit-images 32 --quality fast ";
  const std::string met = FreshRunDir("target_met");
  Result r = RunWorker(sweep + "--target-fd 1e6 --stop-at-target --lr-scaling linear --base-batch-size 8 --out " + met);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("reached the quality target; --stop-at-target ends this batch size"));
  const std::string csv = ReadCliFile(met + "/epochs.csv");
  EXPECT_THAT(csv, HasSubstr("\n8,1,"));
  EXPECT_THAT(csv, HasSubstr("\n16,1,"));
  EXPECT_THAT(csv, Not(HasSubstr("\n8,2,")));  // stopped at the target
  EXPECT_THAT(csv, Not(HasSubstr("\n16,2,")));
  const std::string timing = ReadCliFile(met + "/timing.md");
  EXPECT_THAT(timing, HasSubstr("## Time to target (Fréchet distance <= 1e+06"));
  EXPECT_THAT(timing, HasSubstr("| 8 | epoch 1 (by) | "));
  EXPECT_THAT(timing, HasSubstr("- global batch 16: 0.0002 (linear scaling of 0.0001 from batch 8)"));

  const std::string missed = FreshRunDir("target_missed");
  r = RunWorker(sweep + "--target-fd 1e-9 --out " + missed);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(ReadCliFile(missed + "/timing.md"), HasSubstr("| 16 | never (2 scored epochs) |"));

  // The same settings from a run file reach the run as the flags do: the rule (with its
  // warm-up) in timing.md and run.json, the target and the early stop.
  const std::string yaml = ::testing::TempDir() + "/cli_target.yaml";
  std::ofstream(yaml) << "lr-scaling: sqrt\nbase-batch-size: 4\nwarmup-steps: 3\nwarmup-start: 0.5\n"
                         "target-fd: 1e6\nstop-at-target: true\n";
  const std::string filed = FreshRunDir("target_run_file");
  r = RunWorker(sweep + "--config " + yaml + " --out " + filed);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(ReadCliFile(filed + "/timing.md"),
              HasSubstr("- global batch 16: 0.0002 (sqrt scaling of 0.0001 from batch 4), warm-up over 3 steps "
                        "from 50 %"));
  EXPECT_THAT(ReadCliFile(filed + "/timing.md"), HasSubstr("| 16 | epoch 1 (by) | "));
  EXPECT_THAT(ReadCliFile(filed + "/epochs.csv"), Not(HasSubstr("\n16,2,")));  // stopped at the target
  const nlohmann::json manifest = nlohmann::json::parse(ReadCliFile(filed + "/run.json"));
  EXPECT_EQ(manifest["config"]["learning_rate"]["scaling"], "sqrt");
  EXPECT_EQ(manifest["config"]["learning_rate"]["warmup_steps"], 3);
  EXPECT_EQ(manifest["config"]["quality_target"]["stop"], true);

  r = RunWorker(common + "--quality off --target-fd 50 --out " + FreshRunDir("target_unscored"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--target-fd needs the quality score"));
}

// The quality score end to end: a run with --quality full refuses to start without a
// judge, naming the command; train-judge caches one next to the data; a run then scores
// every epoch (columns, timing.md, log); train-judge refuses to cache a judge that
// learned nothing.
TEST(WorkerCli, TrainJudgeThenQualityScores) {
  const std::string data = MakeJudgeableMnist("ok", 200, false);
  const std::string common = "train --dataset mnist --data-dir " + data + " --batch-size 16 --epochs 2 --limit-images 32 ";
  Result r = RunWorker(common + "--quality full --out " + FreshRunDir("judge_missing"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("gantry-worker train-judge --dataset mnist"));
  r = RunWorker(common + "--out " + FreshRunDir("judge_auto"));  // auto: trains, says why unscored
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("quality: epochs not scored"));

  r = RunWorker("train-judge --dataset mnist --data-dir " + data + " --epochs 3 --min-accuracy 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("judge of mnist: test accuracy "));
  EXPECT_THAT(r.output, HasSubstr("cached: " + data + "/gantry-judge-mnist.bin"));
  r = RunWorker("train-judge --dataset mnist --data-dir " + data);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("already cached"));  // trained once

  const std::string out = FreshRunDir("judge_scored");
  r = RunWorker(common + "--quality fast --tensorboard --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("quality: scoring 64 samples per epoch"));
  std::istringstream csv(ReadCliFile(out + "/epochs.csv"));
  std::string header, row;
  std::getline(csv, header);
  const std::vector<std::string> names = Split(header);
  const auto fd = std::find(names.begin(), names.end(), "quality_fd");
  ASSERT_NE(fd, names.end()) << header;
  ASSERT_LT(fd + 3, names.end());
  EXPECT_EQ(*(fd + 3), "quality_confidence");
  int rows = 0;
  while (std::getline(csv, row)) {
    ++rows;
    const std::vector<std::string> fields = Split(row);
    ASSERT_EQ(fields.size(), names.size()) << row;
    const size_t at = static_cast<size_t>(fd - names.begin());
    EXPECT_GE(std::stod(fields[at]), 0.0) << row;          // scored: not -1
    EXPECT_GE(std::stod(fields[at + 1]), 0.0) << row;      // class entropy
    EXPECT_GT(std::stod(fields[at + 3]), 0.0) << row;      // confidence in (0, 1]
    EXPECT_LE(std::stod(fields[at + 3]), 1.0) << row;
  }
  EXPECT_EQ(rows, 2);
  EXPECT_THAT(ReadCliFile(out + "/timing.md"), HasSubstr("## Sample quality"));
  // Each epoch's score is a TensorBoard scalar too, under its column's name.
  const std::map<std::string, std::vector<float>> scalars =
      testing_tensorboard::ScalarsByTag(testing_tensorboard::ReadEvents(out + "/tensorboard/b16"));
  for (const char* column : {"quality_fd", "quality_class_entropy", "quality_marginal_entropy", "quality_confidence"}) {
    const auto it = scalars.find(std::string("epoch/") + column);
    ASSERT_NE(it, scalars.end()) << column;
    EXPECT_EQ(it->second.size(), 2u) << column;
    for (float v : it->second) EXPECT_GE(v, 0.0f) << column;  // scored, not the -1 of an unscored epoch
  }
  EXPECT_EQ(scalars.count("epoch/val_l1"), 0u);  // no held-out set for MNIST
  ExpectTimeToTarget(common);

  const std::string noise = MakeJudgeableMnist("noise", 200, true);
  r = RunWorker("train-judge --dataset mnist --data-dir " + noise + " --epochs 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not cached"));
  EXPECT_FALSE(fs::exists(noise + "/gantry-judge-mnist.bin"));
}

TEST(WorkerCli, SweepAndRunFile) {
  const std::string data = MakeTinyMnist("sweep", 40);
  const std::string out = FreshRunDir("sweep");
  const std::string yaml = ::testing::TempDir() + "/sweep.yaml";
  std::ofstream(yaml) << "dataset: mnist\ndata-dir: " << data << "\nbatch-size: [8, 16]\nepochs: 1\nmax-steps: 2\n";
  const Result r = RunWorker("train --config " + yaml + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = ReadCliFile(out + "/epochs.csv");
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
  EXPECT_THAT(r.output, HasSubstr("--loss-scale-growth-interval"));
  EXPECT_THAT(r.output, HasSubstr("[default: dynamic for bf16 and fp16, none for fp32]"));

  r = RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 10 --loss-scale 8 "
                "--debug-inject-inf-step 1 --debug-inject-inf-rank 2 --out " + FreshRunDir("bad3"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--debug-inject-inf-rank 2 does not exist in a run of 1 rank(s)"));
  r = RunWorker("train --precision fp64 --out " + FreshRunDir("bad4"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--precision: bad value 'fp64' (one of fp32, bf16, fp16)"));
}

// Ordinary mistakes end in exit 2 and a line naming the thing, never an uncaught
// exception or a gRPC abort.
TEST(WorkerCli, OrdinaryMistakesExitTwoNamingTheCause) {
  const std::string data = MakeTinyMnist("mistakes", 20);
  Result r = RunWorker("train --config " + data + " --out " + FreshRunDir("config_dir"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(data + ": is a directory, expected a file"));

  r = RunWorker("train --dataset mnist --data-dir " + data + "/train-images-idx3-ubyte --out " +
                FreshRunDir("data_file"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not a directory; --data-dir takes the folder holding the IDX files, not a file"));

  // A run file nested past the parser (the other run-file and batch-size mistakes are
  // unit tests in tests/spec: each run of the binary here costs seconds of MPI start-up).
  const std::string deep = ::testing::TempDir() + "/mistake_deep.yaml";
  std::ofstream(deep) << "epochs: " << std::string(5000, '[') << std::string(5000, ']') << "\n";
  r = RunWorker("train --config " + deep);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("nested too deeply for the YAML parser"));

  // The pool's token, as the CLI's: a control character is refused before any call.
  r = RunWorker("serve --coordinator 127.0.0.1:1 --token \"$(printf 'c0ffee\\001zz0123456789')\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--token: the token holds a byte that is not printable ASCII (byte 0x01"));
  r = RunWorker("serve --coordinator 127.0.0.1:99999");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--coordinator 127.0.0.1:99999: port 99999 is out of range"));
}

// Issue 29: numbers out of range, empty paths, a run folder's entries that are not what
// their names say, and CLI11's own parse errors: each exits 2 naming the thing (never 134,
// 139, 105 or a default run), and nothing of the user's is touched.
TEST(WorkerCli, HardenedRefusalsExitTwoNamingTheThing) {
  const std::string data = MakeTinyMnist("hardened", 20);
  const std::string base = "train --dataset mnist --data-dir " + data + " --max-steps 1 ";
  const std::string train = base + "--batch-size 10 ";
  Result r = RunWorker(train + "--straggler-window 2147483648 --out " + FreshRunDir("window"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--straggler-window: bad value '2147483648' (an integer in [1, 10000])"));
  r = RunWorker(train + "--straggler-window 2147483647 --out " + FreshRunDir("window2"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--straggler-window: bad value '2147483647'"));
  // A run too large for the machine is refused by the estimate, before anything is allocated.
  r = RunWorker(base + "--batch-size 16777216 --out " + FreshRunDir("huge"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--batch-size 16777216 on 1 rank needs about"));
  EXPECT_FALSE(fs::exists(FreshRunDir("huge")));

  // --config '' and --resume '' are mistakes, not "no run file".
  r = RunWorker("train --config '' --out " + FreshRunDir("empty_config"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--config '': give the path of a YAML or JSON run file"));
  r = RunWorker("train --resume ''");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--resume '': give the folder of the run to continue"));

  // A new run is not written into someone's folder; the file stays as it was.
  const std::string users = FreshRunDir("users");
  fs::create_directories(users);
  std::ofstream(users + "/thesis.tex") << "mine";
  r = RunWorker(train + "--out " + users);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(users + ": holds thesis.tex, which is not a run's file"));
  EXPECT_EQ(ReadCliFile(users + "/thesis.tex"), "mine");

  // A folder named log.txt aborted train; now it is refused by name, as is a FIFO.
  const std::string run = FreshRunDir("log_dir");
  ASSERT_EQ(RunWorker(train + "--out " + run).exit_code, 0);
  fs::rename(run + "/log.txt", run + "/log.was");
  fs::create_directories(run + "/log.txt");
  r = RunWorker("train --resume " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(run + "/log.txt: is a folder, but a run writes its log.txt there as a file"));
  fs::remove(run + "/log.txt");
  ASSERT_EQ(::mkfifo((run + "/log.txt").c_str(), 0600), 0);
  r = RunWorker("train --resume " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(run + "/log.txt: is not a file"));

  // CLI11's own errors (a value that is not a number, an unknown flag) exit 2 in every
  // subcommand, not 105, 106 or 109.
  for (const char* args : {"make-flow --out /tmp/x --nx abc", "rollout --run x --case y --steps abc",
                           "serve --max-jobs 1.5", "generate --run x --out y --count 1e400", "export --bogus",
                           "train --epochs 3 --epochs", "inspect-checkpoint", "no-such-subcommand"}) {
    r = RunWorker(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  }
  r = RunWorker("rollout --run x --case y --steps abc");
  EXPECT_THAT(r.output, HasSubstr("--steps: bad value 'abc' (an integer in [1, 1000000])"));
  EXPECT_THAT(r.output, Not(HasSubstr("1.79769e+308")));
}

TEST(WorkerCli, ALimitAboveTheDatasetIsSaid) {
  const std::string data = MakeTinyMnist("limit", 20);
  const Result r = RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 10 --max-steps 1 "
                             "--limit-images 100000 --out " + FreshRunDir("limit"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--limit-images 100000 is more than the 20 images in " + data +
                                  "; training on all 20"));
}

// One rank, bf16 with dynamic loss scaling: an inf forced into G's gradient at step 2 is
// skipped and counted, the run trains on, and run.json, epochs.csv and timing.md say so.
TEST(WorkerCli, Bf16RunSkipsAForcedOverflowAndReportsIt) {
  const std::string data = MakeTinyMnist("bf16", 40);
  const std::string out = FreshRunDir("bf16");
  const Result r = RunWorker("train --dataset mnist --data-dir " + data + " --batch-size 8 --max-steps 4 "
                             "--precision bf16 --loss-scale-init 1024 --debug-inject-inf-step 2 "
                             "--debug-inject-inf-network g --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("step 2: G's gradient holds inf/NaN; G's step skipped on every rank, its loss "
                                  "scale now 512"));
  const auto manifest = nlohmann::json::parse(ReadCliFile(out + "/run.json"));
  EXPECT_EQ(manifest["config"]["precision"], "bf16");
  EXPECT_EQ(manifest["config"]["loss_scale"]["mode"], "dynamic");
  EXPECT_EQ(manifest["config"]["loss_scale"]["init"], 1024.0);
  EXPECT_EQ(manifest["config"]["allreduce_dtype"], "bf16");
  EXPECT_EQ(manifest["config"]["debug_inject_inf"]["network"], "g");
  const std::string csv = ReadCliFile(out + "/epochs.csv");
  // Later columns (energy, quality, flow validation) follow peak_rss_mb.
  EXPECT_THAT(csv, HasSubstr(",loss_scale_g,loss_scale_d,skipped_steps_g,skipped_steps_d,peak_rss_mb,"));
  EXPECT_THAT(csv, HasSubstr(",quality_confidence,val_l1,val_rel_l2,energy_source,val_persistence_l1,val_persistence_rel_l2,"
                             "quality_kid,allreduce_exposed_ms\n"));
  // ... straggler_flags, then ours
  EXPECT_THAT(csv, ::testing::ContainsRegex(",0,512,1024,1,0,[0-9]+\\.[0-9],"));
  // No held-out set: zeros; energy from RAPL or the estimate; no KID; one rank: all of
  // the (token) all-reduce time exposed.
  EXPECT_THAT(csv, ::testing::ContainsRegex(",0\\.00000,0\\.00000,[12],0\\.00000,0\\.00000,nan,[0-9]+\\.[0-9]{3}\n"));
  EXPECT_THAT(ReadCliFile(out + "/timing.md"), HasSubstr("(1 rank, bf16, dynamic loss scaling)"));
}

// --resume from the command line: a finished run is left alone; what cannot be resumed
// says why; a checkpoint folder that cannot be written stops the run naming it.
TEST(WorkerCli, ResumeRefusesWhatItCannotContinue) {
  const std::string data = MakeTinyMnist("resume", 20);
  const std::string out = FreshRunDir("resume");
  const std::string train = "train --dataset mnist --data-dir " + data + " --batch-size 10 --epochs 2 ";
  ASSERT_EQ(RunWorker(train + "--out " + out).exit_code, 0);
  const auto manifest = nlohmann::json::parse(ReadCliFile(out + "/run.json"));
  EXPECT_EQ(manifest["settings"]["batch-size"], "10");
  EXPECT_EQ(manifest["config"]["checkpoint_every_steps"], 500);

  Result r = RunWorker("train --resume " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(out + " already finished (2 epoch rows); nothing to train"));
  // Fewer epochs and another rate are refused with both values (more epochs would continue).
  r = RunWorker("train --resume " + out + " --lr 0.5 --epochs 1 --progress-seconds 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--resume continues " + out +
                                  " with the settings in its run.json; --epochs 1 "
                                  "(the run's: 2), --lr 0.5 (the run's: not given (its default, 0.0001)) would "
                                  "change them (allowed with --resume: --data-dir, --progress-seconds"));
  r = RunWorker("train --resume " + out + " --config run.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--config cannot be combined with --resume"));
  r = RunWorker("train --resume " + data);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr(data + ": not a run folder (no run.json); give the --out folder of a run"));
  r = RunWorker(train + "--out " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("already holds a run"));

  // A run folder whose checkpoints are gone.
  fs::remove_all(out + "/checkpoints");
  r = RunWorker("train --resume " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("cannot resume " + out + ": " + out + "/checkpoints: no checkpoints to resume from"));
  // A run.json from before checkpoints.
  std::ofstream(out + "/run.json") << R"({"config": {}})";
  r = RunWorker("train --resume " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr(out + "/run.json: holds no \"settings\""));

  const std::string blocked = FreshRunDir("blocked_checkpoints");
  fs::create_directories(blocked);
  std::ofstream(blocked + "/checkpoints") << "a file where the checkpoint folder goes";
  // Refused before the run starts (not at its first checkpoint), and the file stays.
  r = RunWorker(train + "--out " + blocked);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(blocked + "/checkpoints: is not a folder, but a run writes its checkpoints there "
                                  "as a folder; move it away, or choose another --out"));
  EXPECT_EQ(ReadCliFile(blocked + "/checkpoints"), "a file where the checkpoint folder goes");

  r = RunWorker("--help");
  EXPECT_THAT(r.output, HasSubstr("inspect-checkpoint"));
  r = RunWorker("train --help");
  EXPECT_THAT(r.output, HasSubstr("--resume RUN"));
  EXPECT_THAT(r.output, HasSubstr("--checkpoint-every-steps"));
  EXPECT_THAT(r.output, HasSubstr("--keep-checkpoints"));
}

}  // namespace
}  // namespace gantry
