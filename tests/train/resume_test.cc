// The key property of checkpoints: a run interrupted after k steps and resumed from its
// newest checkpoint ends with BIT-IDENTICAL weights, optimizer state, loss scales and
// noise stream, and the same epochs.csv rows (timing columns aside) and samples, as the
// run that was never interrupted. One rank here (the interrupt is Trainer's test hook);
// tests/train/mpi_worker_e2e.sh does it with SIGKILL under mpirun -np 2.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/training_fixtures.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/share_checkpoint.h"
#include "worker/comm/local_communicator.h"
#include "worker/run/resume.h"
#include "worker/run/run_manifest.h"
#include "worker/train/trainer.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::FreshTestDir;
using testing::QuickRunConfig;
using testing::SameBits;

std::string ReadAll(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path, std::ios::binary).rdbuf();
  return ss.str();
}

// epochs.csv without its timing columns (seconds, step times, data wait, all-reduce
// time and share, peak RSS).
std::string CsvWithoutTiming(const std::string& path) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty())) {
    const std::vector<std::string> cols = absl::StrSplit(line, ',');
    std::vector<std::string> kept;
    for (size_t i : {0, 1, 5, 6, 7, 11, 14, 15, 16, 17, 18}) kept.push_back(cols.at(i));
    out += absl::StrJoin(kept, ",") + "\n";
  }
  return out;
}

// One process of the run in `c.out`: a fresh start, or a resume from the newest
// checkpoint; `interrupt_after` > 0 kills it (as far as the run can tell) after that
// many steps.
absl::StatusOr<std::vector<EpochRow>> RunProcess(const TrainConfig& c, const ImageDataset& data, bool resume,
                                                 int64_t interrupt_after = 0) {
  std::unique_ptr<Communicator> comm = LocalGroup(1).Rank(0);
  absl::StatusOr<RunFolder> folder = resume ? RunFolder::Open(c.out) : RunFolder::Create(c.out);
  if (!folder.ok()) return folder.status();
  if (!resume) RETURN_IF_ERROR(folder->WriteRunJson("{}"));
  std::optional<TrainingState> state;
  if (resume) {
    const CheckpointStore store(folder->CheckpointDir());
    ASSIGN_OR_RETURN(SharedCheckpoint shared,
                     ShareCheckpoint(*comm, &store, ExpectationsFor(c, data.count), /*step=*/0, CommOptions{}));
    state = std::move(shared.state);
  }
  Trainer trainer(c, data, &*folder, *comm, Clock::Real(), CpuBackend());
  trainer.InterruptAfterSteps(interrupt_after);
  return trainer.Run(state ? &*state : nullptr);
}

TrainingState NewestState(const TrainConfig& c, int64_t images) {
  absl::StatusOr<LoadedCheckpoint> loaded =
      CheckpointStore(c.out + "/checkpoints").LoadNewestUsable(ExpectationsFor(c, images));
  CHECK(loaded.ok()) << std::string(loaded.status().message());
  return loaded->state;
}

void ExpectSameRun(const TrainConfig& straight, const TrainConfig& resumed, int64_t images,
                   const std::string& last_samples = "samples/epoch_002.npy") {
  const TrainingState a = NewestState(straight, images);
  const TrainingState b = NewestState(resumed, images);
  EXPECT_TRUE(SameBits(a.g.params, b.g.params));
  EXPECT_TRUE(SameBits(a.g.buffers, b.g.buffers));
  EXPECT_TRUE(SameBits(a.d.params, b.d.params));
  EXPECT_TRUE(SameBits(a.d.buffers, b.d.buffers));
  for (auto [x, y] : {std::pair{&a.g_opt, &b.g_opt}, std::pair{&a.d_opt, &b.d_opt}}) {
    EXPECT_EQ(x->steps_taken, y->steps_taken);
    ASSERT_EQ(x->buffers.size(), y->buffers.size());
    for (size_t i = 0; i < x->buffers.size(); ++i) EXPECT_TRUE(SameBits(x->buffers[i], y->buffers[i]));
  }
  EXPECT_EQ(a.g_scaler, b.g_scaler);
  EXPECT_EQ(a.d_scaler, b.d_scaler);
  EXPECT_EQ(a.position, b.position);  // the noise stream's state included
  EXPECT_EQ(CsvWithoutTiming(straight.out + "/epochs.csv"), CsvWithoutTiming(resumed.out + "/epochs.csv"));
  EXPECT_EQ(ReadAll(straight.out + "/" + last_samples), ReadAll(resumed.out + "/" + last_samples));
  EXPECT_FALSE(ReadAll(resumed.out + "/" + last_samples).empty());
}

// 24 images in batches of 4: 6 steps per epoch, 2 epochs; checkpoints after steps 4
// (mid epoch 1), 6 (end of epoch 1), 8 (mid epoch 2) and 12 (the end). Killed after
// step 9, the run resumes from step 8.
TEST(Resume, RunJsonIsReadAsABoundedRegularFileAndRefusedByName) {
  const std::string run = FreshTestDir("resume-run-json");
  const std::string path = run + "/run.json";

  // A FIFO in its place is refused at once, not waited on for a writer.
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::future<absl::Status> pending =
      std::async(std::launch::async, [&run] { return ResumeSettings(run, {}).status(); });
  if (pending.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "--resume waits on a FIFO at " << path;
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);  // a writer that closes: the reader sees EOF
    if (fd >= 0) ::close(fd);
  }
  const absl::Status fifo = pending.get();
  EXPECT_TRUE(absl::IsInvalidArgument(fifo)) << fifo;
  EXPECT_THAT(fifo.message(), ::testing::AllOf(HasSubstr(path), HasSubstr("not a regular file"),
                                               HasSubstr("restore it from a copy, or start the run again")));

  // A run.json past the bound is refused before it is read whole.
  std::filesystem::remove(path);
  {
    std::ofstream out(path);
    out << R"({"settings": {}, "padding": ")" << std::string(size_t{1} << 20, 'x') << R"("})";
  }
  const absl::Status big = RecordedExpectations(run).status();
  EXPECT_TRUE(absl::IsInvalidArgument(big)) << big;
  EXPECT_THAT(big.message(), ::testing::AllOf(HasSubstr(path), HasSubstr("more than the 1048576")));

  // A run.json within the bound is still read; a missing one names the folder.
  {
    std::ofstream out(path, std::ios::trunc);
    out << R"({"settings": {"dataset": "mnist"}})";
  }
  const absl::StatusOr<RawSettings> small = ResumeSettings(run, {});
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->at("dataset"), "mnist");
  EXPECT_EQ(small->at("out"), run);
  std::filesystem::remove(path);
  const absl::Status missing = ResumeSettings(run, {}).status();
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_THAT(missing.message(), HasSubstr(run + ": not a run folder (no run.json)"));
  {
    std::ofstream out(run + "/a-file");
  }
  const absl::Status not_a_folder = ResumeSettings(run + "/a-file", {}).status();
  EXPECT_TRUE(absl::IsNotFound(not_a_folder)) << not_a_folder;
  EXPECT_THAT(not_a_folder.message(), HasSubstr(run + "/a-file: not a run folder (not a folder)"));
}

// A pix2pix run.json from before --predict resumes (and rolls out) as the frame-predicting
// generator it trained; one that records --predict keeps it; other models get no such key.
TEST(Resume, Pix2pixRunsWithoutARecordedPredictionResumeAsFrame) {
  const std::string run = FreshTestDir("resume-predict");
  auto write = [&run](const std::string& settings) {
    std::ofstream out(run + "/run.json", std::ios::trunc);
    out << R"({"settings": )" << settings << "}";
  };
  write(R"({"model": "pix2pix", "dataset": "flow"})");
  absl::StatusOr<RawSettings> old_run = ResumeSettings(run, {});
  ASSERT_TRUE(old_run.ok()) << old_run.status();
  EXPECT_EQ(old_run->at("predict"), "frame");
  EXPECT_EQ(ResolveTrainConfig(*old_run)->pix2pix.predict, NextFramePrediction::kFrame);

  write(R"({"model": "pix2pix", "dataset": "flow", "predict": "delta"})");
  absl::StatusOr<RawSettings> recorded = ResumeSettings(run, {});
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(recorded->at("predict"), "delta");
  // Resuming cannot switch the mode: the checkpoint's layout follows it.
  EXPECT_THAT(ResumeSettings(run, {{"predict", "frame"}}).status().message(), HasSubstr("--predict"));

  write(R"({"dataset": "mnist"})");
  EXPECT_FALSE(ResumeSettings(run, {})->contains("predict"));
}

// run.json records --predict even when the run left it at its default, so a later change
// of the default cannot change what resuming the run builds.
TEST(Resume, RunJsonRecordsThePredictionModeOfAPix2pixRun) {
  const RawSettings given = {{"model", "pix2pix"}, {"dataset", "flow"}, {"data-dir", "/d"}};
  absl::StatusOr<TrainConfig> config = ResolveTrainConfig(given);
  ASSERT_TRUE(config.ok()) << config.status();
  const nlohmann::json j = nlohmann::json::parse(RunManifestJson(*config, given, "/d", 10, "eigen", "", 1, "local"));
  EXPECT_EQ(j["settings"]["predict"], "delta");
  EXPECT_EQ(j["config"]["pix2pix"]["predict"], "delta");
  EXPECT_EQ(j["settings"]["model"], "pix2pix");  // the given settings are all still there
  const RawSettings dcgan = {{"dataset", "mnist"}};
  const nlohmann::json d = nlohmann::json::parse(RunManifestJson(*ResolveTrainConfig(dcgan), dcgan, "/d", 10, "eigen",
                                                                 "", 1, "local"));
  EXPECT_FALSE(d["settings"].contains("predict"));
  EXPECT_FALSE(d["config"].contains("pix2pix"));
}

TEST(Resume, MidEpochCheckpointsResumeBitIdentically) {
  const ImageDataset data = testing::TinyImages(24);
  const TrainConfig straight = QuickRunConfig(FreshTestDir("straight") + "/run");
  ASSERT_TRUE(RunProcess(straight, data, false).ok());

  const TrainConfig c = QuickRunConfig(FreshTestDir("mid_epoch") + "/run");
  EXPECT_EQ(RunProcess(c, data, false, 9).status().code(), absl::StatusCode::kAborted);
  const SweepPosition at = NewestState(c, 24).position;
  EXPECT_EQ(at.run_step, 8);
  EXPECT_EQ(at.epoch, 2);
  EXPECT_EQ(at.step_in_epoch, 2);
  EXPECT_THAT(ReadAll(c.out + "/epochs.csv"), HasSubstr("\n4,1,"));
  // Resumed at step 8 (epoch 2, step 2 of 6): the rest of epoch 2 from the same permutation.
  absl::StatusOr<std::vector<EpochRow>> rows = RunProcess(c, data, true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);  // the epoch-1 row from the checkpoint, the epoch-2 row new
  EXPECT_EQ((*rows)[0].steps, 6);
  EXPECT_EQ((*rows)[1].steps, 6);
  ExpectSameRun(straight, c, 24);
}

// A warm-up that spans the checkpoint (10 steps; killed after 9, resumed from 8) with
// linear scaling: the resumed optimizers continue the ramp from their step count, so the
// run is bit-identical to the uninterrupted one, and the rule did change the result.
TEST(Resume, AWarmUpAcrossTheCheckpointResumesBitIdentically) {
  const ImageDataset data = testing::TinyImages(24);
  auto config = [](const std::string& name, bool warm) {
    TrainConfig c = QuickRunConfig(FreshTestDir(name) + "/run");
    if (!warm) return c;
    c.rate_rule.scaling = LrScaling::kLinear;
    c.rate_rule.base_batch_size = 2;
    c.rate_rule.warmup_steps = 10;
    c.rate_rule.warmup_start = 0.2;
    return c;
  };
  const TrainConfig straight = config("warm_straight", true);
  ASSERT_TRUE(RunProcess(straight, data, false).ok());
  const TrainConfig c = config("warm_resumed", true);
  EXPECT_EQ(RunProcess(c, data, false, 9).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(NewestState(c, 24).position.run_step, 8);
  ASSERT_TRUE(RunProcess(c, data, true).ok());
  ExpectSameRun(straight, c, 24);

  const TrainConfig plain = config("warm_none", false);
  ASSERT_TRUE(RunProcess(plain, data, false).ok());
  EXPECT_FALSE(SameBits(NewestState(plain, 24).g.params, NewestState(straight, 24).g.params));
}

// --g-ema across a mid-epoch checkpoint: the average resumes bit-identically; it makes
// the samples (they differ from those of the same run without it) while the live weights
// train exactly as without it.
TEST(Resume, AGeneratorAverageResumesBitIdenticallyAndMakesTheSamples) {
  const ImageDataset data = testing::TinyImages(24);
  auto config = [](const std::string& name, double ema) {
    TrainConfig c = QuickRunConfig(FreshTestDir(name) + "/run");
    c.g_ema = ema;
    return c;
  };
  const TrainConfig straight = config("ema_straight", 0.9);
  ASSERT_TRUE(RunProcess(straight, data, false).ok());
  const TrainConfig c = config("ema_resumed", 0.9);
  EXPECT_EQ(RunProcess(c, data, false, 9).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(NewestState(c, 24).position.run_step, 8);
  ASSERT_TRUE(RunProcess(c, data, true).ok());
  ExpectSameRun(straight, c, 24);
  const TrainingState a = NewestState(straight, 24);
  const TrainingState b = NewestState(c, 24);
  ASSERT_TRUE(a.g_average.has_value() && b.g_average.has_value());
  EXPECT_TRUE(SameBits(a.g_average->params, b.g_average->params));
  EXPECT_TRUE(SameBits(a.g_average->buffers, b.g_average->buffers));
  EXPECT_FALSE(SameBits(a.g_average->params, a.g.params));

  const TrainConfig plain = config("ema_none", 0);
  ASSERT_TRUE(RunProcess(plain, data, false).ok());
  const TrainingState p = NewestState(plain, 24);
  EXPECT_FALSE(p.g_average.has_value());
  EXPECT_TRUE(SameBits(p.g.params, a.g.params));  // the average does not touch training
  EXPECT_TRUE(SameBits(p.d.params, a.d.params));
  EXPECT_NE(ReadAll(plain.out + "/samples/epoch_002.npy"), ReadAll(straight.out + "/samples/epoch_002.npy"));
}

// --augment across a mid-epoch checkpoint: the draws are a function of (seed, step, row),
// so the resumed run augments exactly as the uninterrupted one; the checkpoints record the
// policy; and the policy changes the training (the same run without it ends elsewhere).
TEST(Resume, AnAugmentedRunResumesBitIdentically) {
  const ImageDataset data = testing::TinyImages(24);
  auto config = [](const std::string& name, AugmentPolicy augment) {
    TrainConfig c = QuickRunConfig(FreshTestDir(name) + "/run");
    c.augment = augment;
    return c;
  };
  const AugmentPolicy all{.color = true, .translation = true, .cutout = true};
  const TrainConfig straight = config("augment_straight", all);
  ASSERT_TRUE(RunProcess(straight, data, false).ok());
  const TrainConfig c = config("augment_resumed", all);
  EXPECT_EQ(RunProcess(c, data, false, 9).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(NewestState(c, 24).position.run_step, 8);
  ASSERT_TRUE(RunProcess(c, data, true).ok());
  ExpectSameRun(straight, c, 24);
  EXPECT_EQ(NewestState(c, 24).augment, "color,translation,cutout");

  const TrainConfig plain = config("augment_none", AugmentPolicy{});
  ASSERT_TRUE(RunProcess(plain, data, false).ok());
  const TrainingState p = NewestState(plain, 24);
  EXPECT_EQ(p.augment, "off");
  EXPECT_FALSE(SameBits(p.g.params, NewestState(straight, 24).g.params));
  EXPECT_FALSE(SameBits(p.d.params, NewestState(straight, 24).d.params));
}

// Mixed precision with dynamic loss scaling and a skipped D step (the scalers' state and
// skip counts cross the checkpoint), SGD with momentum, and a checkpoint at an epoch end.
TEST(Resume, EpochEndCheckpointResumesBitIdenticallyWithLossScaling) {
  const ImageDataset data = testing::TinyImages(24);
  auto config = [](const std::string& name) {
    TrainConfig c = QuickRunConfig(FreshTestDir(name) + "/run");
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.01f;
    c.checkpoint_every_steps = 0;  // at epoch ends only
    c.mixed.precision = MathPrecision::kBf16;
    c.mixed.loss_scale.mode = LossScaleMode::kDynamic;
    c.mixed.loss_scale.growth_interval = 2;
    c.mixed.inject_inf = InjectInf{.step = 5, .rank = 0, .g = false, .d = true};
    return c;
  };
  const TrainConfig straight = config("straight_bf16");
  ASSERT_TRUE(RunProcess(straight, data, false).ok());
  const TrainConfig c = config("epoch_end");
  EXPECT_EQ(RunProcess(c, data, false, 8).status().code(), absl::StatusCode::kAborted);
  // Killed mid epoch 2: epochs.csv holds epoch 1's row, the checkpoint is epoch 1's end.
  EXPECT_THAT(ReadAll(c.out + "/epochs.csv"), HasSubstr("\n4,1,"));
  const SweepPosition at = NewestState(c, 24).position;
  EXPECT_EQ(at.epoch, 2);
  EXPECT_EQ(at.step_in_epoch, 0);
  // As if the process had died after appending a row but before its checkpoint: the
  // resume drops the row, and the row of the epoch run again is not doubled.
  std::ofstream(c.out + "/epochs.csv", std::ios::app) << "4,2,0.1,0.1,1.0,9.9,9.9,6,0,0,0,1,0,0,0,1,1,0,0,1\n";
  ASSERT_TRUE(RunProcess(c, data, true).ok());
  ExpectSameRun(straight, c, 24);
  const TrainingState end = NewestState(c, 24);
  EXPECT_EQ(end.rows[0].skipped_steps_d, 1);  // the forced overflow at step 5
  EXPECT_TRUE(RunFinished(end, c));
}

// A sweep killed in its second batch size, after the first one's last checkpoint:
// the resume finds the first batch size done and starts the second from its seed.
TEST(Resume, ASweepResumesAtTheNextBatchSize) {
  const ImageDataset data = testing::TinyImages(16);
  auto config = [](const std::string& name) {
    TrainConfig c = QuickRunConfig(FreshTestDir(name) + "/run");
    c.batch_sizes = {4, 8};  // 4 steps, then 2 steps
    c.epochs = 1;
    c.checkpoint_every_steps = 0;
    return c;
  };
  const TrainConfig straight = config("sweep_straight");
  ASSERT_TRUE(RunProcess(straight, data, false).ok());
  const TrainConfig c = config("sweep");
  EXPECT_EQ(RunProcess(c, data, false, 5).status().code(), absl::StatusCode::kAborted);
  const TrainingState at = NewestState(c, 16);
  EXPECT_EQ(at.position.batch_index, 0);
  EXPECT_FALSE(RunFinished(at, c));
  absl::StatusOr<std::vector<EpochRow>> rows = RunProcess(c, data, true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].batch_size, 8);
  ExpectSameRun(straight, c, 16, "samples/b0008/epoch_001.npy");
}

TEST(Resume, EveryRankGetsTheCheckpointOrTheSameError) {
  const TrainConfig c = QuickRunConfig(FreshTestDir("share") + "/run");
  const ImageDataset data = testing::TinyImages(24);
  CheckpointStore store(c.out + "/checkpoints");
  for (bool saved : {false, true}) {
    if (saved) {
      ASSERT_TRUE(store.Save(0, EncodeCheckpoint(testing::FreshState(c, data)), 3, ExpectationsFor(c, data.count)).ok());
    }
    LocalGroup group(2);
    std::vector<std::unique_ptr<Communicator>> comms;
    for (int r = 0; r < 2; ++r) comms.push_back(group.Rank(r));
    std::vector<absl::StatusOr<SharedCheckpoint>> got(2, absl::UnknownError("not run"));
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        got[r] = ShareCheckpoint(*comms[r], r == 0 ? &store : nullptr, ExpectationsFor(c, data.count), 0, {});
      });
    }
    for (std::thread& t : threads) t.join();
    if (!saved) {
      for (const auto& g : got) EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound) << g.status();
      EXPECT_EQ(got[0].status(), got[1].status());
      continue;
    }
    ASSERT_TRUE(got[0].ok() && got[1].ok()) << got[0].status() << got[1].status();
    EXPECT_EQ(got[0]->state, got[1]->state);
  }
}

}  // namespace
}  // namespace gantry
