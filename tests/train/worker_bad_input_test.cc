// End-to-end: hostile but fair inputs to the gantry-worker binary (issue 18) end in a
// clear message and exit code 2, never an abort, and lose nothing: a batch that leaves a
// rank one row, IDX images of another size (also when resuming), IDX files that are not
// regular files or inflate past their header, and damaged or foreign files among a
// run's checkpoints.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/train/worker_process_harness.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::FreshRunPath;
using testing::MakeIdxFolder;
using testing::ReadFileText;
using testing::RunWorkerBinary;
using testing::WorkerResult;

constexpr int kExitUsage = 2;

// A quick run: 40 images, batch 16, 2 epochs of 2 steps, a checkpoint at each epoch end.
std::string QuickRun(const std::string& data, const std::string& out) {
  return "train --dataset mnist --data-dir " + data + " --out " + out +
         " --batch-size 16 --epochs 2 --checkpoint-every-steps 0 --progress-seconds 0";
}

std::vector<std::string> CheckpointNames(const std::string& run) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(run + "/checkpoints")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WorkerBadInput, ABatchThatLeavesARankOneRowIsRefusedBeforeAnythingIsWritten) {
  const std::string data = MakeIdxFolder("batch_of_one", 32);
  const std::string out = FreshRunPath("batch_of_one");
  const WorkerResult r = RunWorkerBinary("train --dataset mnist --data-dir " + data + " --limit-images 32 "
                                         "--batch-size 1 --max-steps 1 --out " + out);
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--batch-size 1 on 1 rank(s) gives a rank 1 row(s), but dcgan's BatchNorm needs "
                                  "at least 2 per rank; use a batch size of at least 2"));
  EXPECT_FALSE(fs::exists(out)) << "a refused run leaves no run folder";
  // With --sync-bn the statistics are the whole batch's, but one row is still too few.
  const WorkerResult sync = RunWorkerBinary("train --dataset mnist --data-dir " + data +
                                            " --batch-size 1 --sync-bn --max-steps 1 --out " + out);
  EXPECT_EQ(sync.exit_code, kExitUsage) << sync.output;
  EXPECT_THAT(sync.output, HasSubstr("BatchNorm needs at least 2 rows in a batch"));
}

TEST(WorkerBadInput, ImagesOfAnotherSizeAreRefusedNamingTheFileAndBothSizes) {
  const std::string small = MakeIdxFolder("side32", 40, 32);
  const std::string out = FreshRunPath("side32");
  const std::string expected = small + "/train-images-idx3-ubyte: images are 32x32 (1 channel), but --model dcgan "
                                       "needs 28x28 (1 channel) images";
  WorkerResult r = RunWorkerBinary(QuickRun(small, out));
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_THAT(r.output, HasSubstr(expected));
  EXPECT_FALSE(fs::exists(out + "/run.json"));

  // Resuming a good run with --data-dir pointing at them: refused, the checkpoints kept.
  const std::string good = MakeIdxFolder("side28", 40);
  const std::string run = FreshRunPath("side28");
  r = RunWorkerBinary(QuickRun(good, run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> before = CheckpointNames(run);
  r = RunWorkerBinary("train --resume " + run + " --data-dir " + small);
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_THAT(r.output, HasSubstr(expected));
  EXPECT_EQ(CheckpointNames(run), before);
}

TEST(WorkerBadInput, IdxFilesThatAreNotRegularFilesAreRefusedByNameAtOnce) {
  const std::string data = MakeIdxFolder("special", 40);
  const std::string images = data + "/train-images-idx3-ubyte";
  for (const std::string kind : {"fifo", "dev-zero"}) {
    fs::remove(images);
    if (kind == "fifo") {
      ASSERT_EQ(mkfifo(images.c_str(), 0600), 0);
    } else {
      ASSERT_EQ(symlink("/dev/zero", images.c_str()), 0);
    }
    const WorkerResult r = RunWorkerBinary(QuickRun(data, FreshRunPath("special_" + kind)));
    EXPECT_EQ(r.exit_code, kExitUsage) << kind << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(images + ": is not a regular file")) << kind;
  }
}

TEST(WorkerBadInput, AGzipBombBehindAnHonestHeaderIsRefused) {
  const std::string data = MakeIdxFolder("bomb", 40);
  const std::string images = data + "/train-images-idx3-ubyte";
  std::string payload = ReadFileText(images);
  fs::remove(images);
  // The 40 images, then 64 MiB of zeros (about 64 KB compressed).
  gzFile gz = gzopen((images + ".gz").c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, payload.data(), static_cast<unsigned>(payload.size())), static_cast<int>(payload.size()));
  const std::string zeros(1 << 20, '\0');
  for (int i = 0; i < 64; ++i) ASSERT_EQ(gzwrite(gz, zeros.data(), zeros.size()), static_cast<int>(zeros.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  const WorkerResult r = RunWorkerBinary(QuickRun(data, FreshRunPath("bomb")));
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_THAT(r.output, HasSubstr(images + ".gz: trailing bytes: header says 40 images of 28x28 (31360 bytes) but "
                                           "more bytes follow"));
}

TEST(WorkerBadInput, PruningCountsOnlyUsableCheckpointsAndInspectReportsWhatResumeUses) {
  const std::string data = MakeIdxFolder("prune", 40);
  const std::string run = FreshRunPath("prune");
  WorkerResult r = RunWorkerBinary(QuickRun(data, run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(CheckpointNames(run), (std::vector<std::string>{"ckpt-2.bin", "ckpt-4.bin"}));
  // Back to the end of epoch 1, with a 1 MB junk file and a renamed copy named newer.
  fs::remove(run + "/checkpoints/ckpt-4.bin");
  {
    std::ofstream junk(run + "/checkpoints/ckpt-99.bin", std::ios::binary);
    uint32_t x = 12345;
    for (int i = 0; i < (1 << 20); ++i) junk.put(static_cast<char>((x = x * 1664525u + 1013904223u) >> 24));
  }
  fs::copy_file(run + "/checkpoints/ckpt-2.bin", run + "/checkpoints/ckpt-50.bin");
  const std::string junk_bytes = ReadFileText(run + "/checkpoints/ckpt-99.bin");

  r = RunWorkerBinary("inspect-checkpoint " + run);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["file"], run + "/checkpoints/ckpt-2.bin");
  ASSERT_EQ(j["skipped"].size(), 2u) << r.output;
  EXPECT_EQ(j["skipped"][0]["file"], run + "/checkpoints/ckpt-99.bin");
  EXPECT_THAT(j["skipped"][0]["why"].get<std::string>(), HasSubstr("not a gantry checkpoint"));
  EXPECT_EQ(j["skipped"][1]["file"], run + "/checkpoints/ckpt-50.bin");
  EXPECT_THAT(j["skipped"][1]["why"].get<std::string>(), HasSubstr("saved at run step 2 but named for step 50"));

  r = RunWorkerBinary("train --resume " + run + " --keep-checkpoints 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("resuming from " + run + "/checkpoints/ckpt-2.bin"));
  // The good checkpoint of the end survives; the files resume cannot use are left alone.
  EXPECT_EQ(CheckpointNames(run), (std::vector<std::string>{"ckpt-4.bin", "ckpt-50.bin", "ckpt-99.bin"}));
  EXPECT_EQ(ReadFileText(run + "/checkpoints/ckpt-99.bin"), junk_bytes);
  r = RunWorkerBinary("inspect-checkpoint " + run);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["file"], run + "/checkpoints/ckpt-4.bin");

  // With nothing usable left, inspect fails as resume would, listing each file's fault.
  fs::remove(run + "/checkpoints/ckpt-4.bin");
  fs::remove(run + "/checkpoints/ckpt-50.bin");
  r = RunWorkerBinary("inspect-checkpoint " + run);
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_THAT(r.output, AllOf(HasSubstr("no usable checkpoint in " + run + "/checkpoints: " + run +
                                        "/checkpoints/ckpt-99.bin: not a gantry checkpoint"),
                              Not(HasSubstr("\"file\""))));
  r = RunWorkerBinary("train --resume " + run);
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_EQ(ReadFileText(run + "/checkpoints/ckpt-99.bin"), junk_bytes);
}

}  // namespace
}  // namespace gantry
