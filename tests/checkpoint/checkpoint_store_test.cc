// CheckpointStore: atomic saves, keep-last-N, and falling back past damaged checkpoints
// to the newest usable one, with each fault reported.
#include "worker/checkpoint/checkpoint_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/training_fixtures.h"
#include "worker/checkpoint/checkpoint_codec.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FreshState;
using testing::FreshTestDir;
using testing::QuickRunConfig;
using testing::TinyImages;

std::vector<int64_t> Steps(const CheckpointStore& store) {
  std::vector<int64_t> steps;
  const absl::StatusOr<std::vector<CheckpointFile>> files = store.List();
  for (const CheckpointFile& f : *files) steps.push_back(f.step);
  return steps;
}

std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

// What a checkpoint of the quick test run must hold.
const CheckpointExpectations& QuickRun() {
  static const auto* run = new CheckpointExpectations(ExpectationsFor(QuickRunConfig("unused"), 24));
  return *run;
}

TEST(CheckpointStore, AFailedSaveNamesThePathAndKeepsTheOldCheckpoints) {
  CheckpointStore store(FreshTestDir("failed_save") + "/checkpoints");
  ASSERT_TRUE(store.Save(4, Bytes("good"), 3, QuickRun()).ok());
  fs::create_directories(store.PathFor(8) + "/in-the-way");  // a folder is not replaced
  const absl::Status s = store.Save(8, Bytes("new"), 3, QuickRun());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(store.PathFor(8) + ": holds something that is not a checkpoint of this run"));
  EXPECT_TRUE(fs::is_directory(store.PathFor(8) + "/in-the-way"));
  EXPECT_THAT(Steps(store), ElementsAre(4));
  std::ifstream old(store.PathFor(4));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(old), {}), "good");
  for (const auto& entry : fs::directory_iterator(store.dir())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
  // A checkpoint folder that cannot be created is named too.
  const std::string blocked = FreshTestDir("blocked");
  std::ofstream(blocked + "/checkpoints") << "a file, not a folder";
  EXPECT_THAT(CheckpointStore(blocked + "/checkpoints").Save(1, Bytes("x"), 3, QuickRun()).message(),
              HasSubstr(blocked + "/checkpoints: cannot create the checkpoint folder"));
}

class LoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = QuickRunConfig("unused");
    static const TrainingState* fresh = new TrainingState(FreshState(config_, data_));  // built once: 0.1 s
    state_ = *fresh;
    store_ = std::make_unique<CheckpointStore>(FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  // Saves the state at `step` (the position is made consistent with it), keeping the
  // newest `keep` usable checkpoints.
  void SaveAt(int64_t step, int64_t keep = 5) {
    ASSERT_TRUE(store_->Save(step, EncodeCheckpoint(StateAt(step)), keep, Expected()).ok());
  }
  TrainingState StateAt(int64_t step) const {
    TrainingState s = state_;
    s.position.run_step = s.position.batch_step = step;
    return s;
  }
  CheckpointExpectations Expected() const { return ExpectationsFor(config_, data_.count); }
  void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
  }
  absl::StatusOr<LoadedCheckpoint> Load() { return store_->LoadNewestUsable(Expected()); }

  ImageDataset data_ = TinyImages(24);
  TrainConfig config_;
  TrainingState state_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(LoadTest, TakesTheNewest) {
  SaveAt(4);
  SaveAt(8);
  const auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->path, store_->PathFor(8));
  EXPECT_EQ(loaded->state.position.run_step, 8);
  EXPECT_TRUE(loaded->passed_over.empty());
  EXPECT_TRUE(testing::SameBits(loaded->state.g.params, state_.g.params));
}

TEST_F(LoadTest, FallsBackPastATornAndACorruptCheckpoint) {
  SaveAt(4);
  SaveAt(8);
  SaveAt(12);
  fs::resize_file(store_->PathFor(12), fs::file_size(store_->PathFor(12)) / 2);  // torn
  {
    std::fstream f(store_->PathFor(8), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1000);
    f.put('\x5a');  // one flipped byte in the payload
  }
  const auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state.position.run_step, 4);
  ASSERT_EQ(loaded->passed_over.size(), 2u);
  EXPECT_EQ(loaded->passed_over[0].path, store_->PathFor(12));
  EXPECT_THAT(loaded->passed_over[0].fault, HasSubstr(store_->PathFor(12) + ": truncated"));
  EXPECT_EQ(loaded->passed_over[1].path, store_->PathFor(8));
  EXPECT_THAT(loaded->passed_over[1].fault, HasSubstr(store_->PathFor(8) + ": checksum mismatch"));
}

TEST_F(LoadTest, NoCheckpointAndNoUsableCheckpointAreDistinctErrors) {
  EXPECT_EQ(Load().status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Load().status().message(), HasSubstr("no checkpoints to resume from"));
  std::ofstream(store_->PathFor(3)) << "not a checkpoint, but long enough to hold a header: 0123456789";
  EXPECT_EQ(Load().status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Load().status().message(), HasSubstr("no usable checkpoint in " + store_->dir() + ": " +
                                                   store_->PathFor(3) + ": not a gantry checkpoint (bad magic bytes)"));
}

TEST_F(LoadTest, ACheckpointOfAnotherModelOrRunIsRefusedByName) {
  // A generator with a 64-wide noise input (another model) in the newest checkpoint.
  TrainingState other_model = state_;
  other_model.g.param_layout[0].dims = {12544, 64};
  other_model.g.params.resize(other_model.g.params.size() - 36 * 12544);
  other_model.position.run_step = other_model.position.batch_step = 8;
  ASSERT_TRUE(store_->Save(8, EncodeCheckpoint(other_model), 5, Expected()).ok());
  absl::StatusOr<LoadedCheckpoint> loaded = Load();
  EXPECT_THAT(loaded.status().message(), HasSubstr("no usable checkpoint"));
  EXPECT_THAT(std::string(loaded.status().message()),
              HasSubstr("ckpt-8.bin: G parameters tensor 0: the checkpoint has 0.linear.weight [12544,64], the "
                        "run's model has 0.linear.weight [12544,100] (the checkpoint belongs to another model"));
  SaveAt(4);  // an older, matching one is used instead
  loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->passed_over.size(), 1u);
  EXPECT_THAT(loaded->passed_over[0].fault, HasSubstr("ckpt-8.bin: G parameters tensor 0"));

  // The other differences, checked on the decoded state (CheckMatchesRun).
  auto fault = [&](const TrainConfig& run, int64_t images) {
    return std::string(CheckMatchesRun(state_, ExpectationsFor(run, images), "ckpt-4.bin").message());
  };
  TrainConfig other = config_;
  other.optimizer.kind = "sgd";
  EXPECT_THAT(fault(other, 24), HasSubstr("ckpt-4.bin: saved with optimizer adam, the run uses sgd"));
  EXPECT_THAT(fault(config_, 25), HasSubstr("saved by a run on 24 training images, this run has 25"));
  other = config_;
  other.batch_sizes = {8, 16};
  EXPECT_THAT(fault(other, 24), HasSubstr("saved at batch size 4 (entry 1 of the sweep), but the run's batch sizes are 8,16"));
  other = config_;
  other.seed = 2;
  EXPECT_THAT(fault(other, 24), HasSubstr("saved by a run with seed 1, this run's seed is 2"));
  // --g-ema: a run with an average needs a checkpoint holding one (shaped as G), and back.
  other = config_;
  other.g_ema = 0.99;
  EXPECT_THAT(fault(other, 24), HasSubstr("ckpt-4.bin: holds no generator average, but this run has --g-ema"));
  TrainingState averaged = state_;
  averaged.g_average = state_.g;
  EXPECT_TRUE(CheckMatchesRun(averaged, ExpectationsFor(other, 24), "x").ok());
  EXPECT_THAT(std::string(CheckMatchesRun(averaged, ExpectationsFor(config_, 24), "x").message()),
              HasSubstr("x: holds a generator average, but this run has no --g-ema"));
  averaged.g_average->param_layout[0].dims = {12544, 64};
  EXPECT_THAT(std::string(CheckMatchesRun(averaged, ExpectationsFor(other, 24), "x").message()),
              HasSubstr("x: G average parameters tensor 0: the checkpoint has 0.linear.weight [12544,64]"));
  // --augment: a checkpoint of one policy continues only a run of the same policy.
  other = config_;
  other.augment = AugmentPolicy{.translation = true, .cutout = true};
  EXPECT_THAT(fault(other, 24), HasSubstr("ckpt-4.bin: saved by a run with --augment off, this run has --augment "
                                          "translation,cutout"));
  TrainingState augmented = state_;
  augmented.augment = "translation,cutout";
  EXPECT_TRUE(CheckMatchesRun(augmented, ExpectationsFor(other, 24), "x").ok());
  other.augment = AugmentPolicy{.color = true};
  EXPECT_THAT(std::string(CheckMatchesRun(augmented, ExpectationsFor(other, 24), "x").message()),
              HasSubstr("x: saved by a run with --augment translation,cutout, this run has --augment color"));
  TrainingState damaged = state_;
  damaged.shares = {3};
  EXPECT_THAT(std::string(CheckMatchesRun(damaged, ExpectationsFor(config_, 24), "x").message()),
              HasSubstr("cannot come from a run; the file is damaged"));
}

TEST_F(LoadTest, KeepsTheNewestNAndIgnoresOtherFiles) {
  EXPECT_TRUE(store_->List()->empty());
  for (int64_t step : {5, 10, 15, 20, 100}) SaveAt(step, 3);
  std::ofstream(store_->dir() + "/notes.txt") << "kept";
  std::ofstream(store_->dir() + "/ckpt-7.bin.tmp.123.0") << "torn";
  EXPECT_THAT(Steps(*store_), ElementsAre(100, 20, 15));  // by step, not by name
  EXPECT_EQ(store_->PathFor(20), store_->dir() + "/ckpt-20.bin");
  store_->RemoveLeftoverTemporaries();
  EXPECT_FALSE(fs::exists(store_->dir() + "/ckpt-7.bin.tmp.123.0"));
  EXPECT_TRUE(fs::exists(store_->dir() + "/notes.txt"));
  SaveAt(101, 1);
  EXPECT_THAT(Steps(*store_), ElementsAre(101));
}

// Issue 18: a junk file named ckpt-99.bin once counted as the newest of the kept, and
// pruning then deleted every good checkpoint.
TEST_F(LoadTest, PruningCountsOnlyUsableCheckpointsAndLeavesTheOthersAlone) {
  SaveAt(4);
  SaveAt(8);
  std::vector<uint8_t> junk(1 << 20);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  WriteFile(store_->PathFor(99), junk);
  TrainingState other_seed = StateAt(60);
  other_seed.position.seed = 7;
  WriteFile(store_->PathFor(60), EncodeCheckpoint(other_seed));  // another run's
  WriteFile(store_->PathFor(50), EncodeCheckpoint(StateAt(8)));  // a renamed copy
  SaveAt(12, 1);
  EXPECT_THAT(Steps(*store_), ElementsAre(99, 60, 50, 12));
  std::ifstream kept(store_->PathFor(99), std::ios::binary);
  EXPECT_EQ(std::vector<uint8_t>(std::istreambuf_iterator<char>(kept), {}), junk);
  const auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->path, store_->PathFor(12));
  ASSERT_EQ(loaded->passed_over.size(), 3u);
  EXPECT_THAT(loaded->passed_over[0].fault, HasSubstr("ckpt-99.bin: not a gantry checkpoint"));
  EXPECT_THAT(loaded->passed_over[1].fault, HasSubstr("ckpt-60.bin: saved by a run with seed 7"));
  EXPECT_THAT(loaded->passed_over[2].fault,
              HasSubstr("ckpt-50.bin: saved at run step 8 but named for step 50 (renamed or copied?)"));
  // A file judged once is judged again when it changes: fixed, it counts.
  WriteFile(store_->PathFor(60), EncodeCheckpoint(StateAt(60)));
  SaveAt(13, 1);
  EXPECT_THAT(Steps(*store_), ElementsAre(99, 60, 50));
}

// Issue 29, item 6: another model's checkpoint under the name of a step the run saves
// was "passed over", then renamed over and deleted. It must stay, byte for byte: renamed
// aside (never over another file), while the run saves its own state and goes on.
TEST_F(LoadTest, AForeignCheckpointUnderTheRunsNameIsNeitherReplacedNorDeleted) {
  TrainingState other_model = StateAt(8);
  other_model.g.param_layout[0].dims = {12544, 64};
  other_model.g.params.resize(other_model.g.params.size() - 36 * 12544);
  const std::vector<uint8_t> foreign = EncodeCheckpoint(other_model);
  WriteFile(store_->PathFor(8), foreign);
  SaveAt(4, 1);
  const std::string aside = store_->PathFor(8) + ".not-this-run";
  std::ofstream(aside) << "an earlier file of that name";  // taken: the next free name is used
  ASSERT_TRUE(store_->Save(8, EncodeCheckpoint(StateAt(8)), 1, Expected()).ok());
  SaveAt(12, 1);  // pruning to 1 deletes the run's own steps 4 and 8, never the foreign file
  std::ifstream kept(aside + ".1", std::ios::binary);
  EXPECT_EQ(std::vector<uint8_t>(std::istreambuf_iterator<char>(kept), {}), foreign);
  std::ifstream earlier(aside);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(earlier), {}), "an earlier file of that name");
  EXPECT_THAT(Steps(*store_), ElementsAre(12));
  // One more of the class: the run's own checkpoint of a step is replaced by its new state.
  SaveAt(12, 1);
  EXPECT_EQ(Load()->path, store_->PathFor(12));
}

// Issue 29, item 2: entries named like checkpoints that are not regular files (a link
// loop, a folder, a FIFO) are passed over without throwing or waiting, and a sparse file
// far larger than memory is refused by its size, naming it, before it is read.
TEST_F(LoadTest, EntriesThatAreNotCheckpointFilesArePassedOverByName) {
  SaveAt(4);
  fs::create_symlink(store_->PathFor(9999), store_->PathFor(9999));  // a loop
  fs::create_directories(store_->PathFor(500));
  ASSERT_EQ(::mkfifo(store_->PathFor(600).c_str(), 0600), 0);
  fs::create_symlink(store_->dir() + "/nowhere", store_->PathFor(700));
  EXPECT_THAT(Steps(*store_), ElementsAre(4));
  {
    std::ofstream(store_->PathFor(800)) << "";
    const int truncated = ::truncate(store_->PathFor(800).c_str(), off_t{100} << 30);  // 100 GiB, sparse
    if (truncated != 0) fs::remove(store_->PathFor(800));
  }
  const auto loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->path, store_->PathFor(4));
  if (fs::exists(store_->PathFor(800))) {
    ASSERT_EQ(loaded->passed_over.size(), 1u);
    EXPECT_THAT(loaded->passed_over[0].fault, HasSubstr(store_->PathFor(800) + ": 107374182400 bytes, more than"));
  }
  SaveAt(8, 1);  // pruning walks past them too
  EXPECT_TRUE(fs::is_directory(store_->PathFor(500)));
}

TEST_F(LoadTest, TheCheckpointResumedFromStaysUntilANewerOneIsSaved) {
  SaveAt(4);
  SaveAt(8);
  // A later process resumed from step 4 (ckpt-8 came afterwards, say by a copy).
  store_ = std::make_unique<CheckpointStore>(store_->dir());
  store_->KeepResumedFrom(4);
  SaveAt(2, 1);  // older than what it resumed from: 4 stays
  EXPECT_THAT(Steps(*store_), ElementsAre(8, 4));
  SaveAt(9, 1);
  EXPECT_THAT(Steps(*store_), ElementsAre(9));
}

}  // namespace
}  // namespace gantry
