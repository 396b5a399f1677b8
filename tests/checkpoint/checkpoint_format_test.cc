// The checkpoint file format: a round trip keeps every field, and each kind of damage
// is reported with its own message.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/byte_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/checkpoint_format.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TrainingState SmallState() {
  TrainingState s;
  s.position = {.batch_index = 1, .batch_size = 8, .epoch = 2, .step_in_epoch = 3, .batch_step = 9, .run_step = 21,
                .steps_left = 100, .seed = 77, .dataset_images = 48, .world_size = 2,
                .noise_rng_state = 0x123456789abcdefull, .skips_logged = 1};
  s.g.param_layout = {{"0.linear.weight", {2, 3}}, {"1.batch_norm.gamma", {3}}};
  s.g.buffer_layout = {{"1.batch_norm.running_mean", {3}}};
  s.g.params = {1, 2, 3, 4, 5, 6, 7, 8, -0.0f};
  s.g.buffers = {0.5f, 0.25f, 1e-30f};
  s.d.param_layout = {{"0.linear.weight", {1, 2}}};
  s.d.params = {-1, 1};
  s.g_opt = {"adam", 7, {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {9, 8, 7, 6, 5, 4, 3, 2, 1}}};
  s.d_opt = {"adam", 6, {{0.5f, 0.5f}, {2, 2}}};
  s.g_scaler = {32768.0f, 12, 1};
  s.d_scaler = {65536.0f, 13, 0};
  s.shares = {5, 3};
  s.epoch.sums = {{0.1, 0.2, 0.3}, 0.01, 0.02, 4.5, 6.5, 1, 0};
  s.epoch.seconds = 0.75;
  s.epoch.straggler_flags = 1;
  EpochRow row;
  row.batch_size = 8;
  row.epoch = 1;
  row.steps = 6;
  row.d_loss = 1.25;
  row.loss_scale_g = 65536;
  row.peak_rss_mb = 321.5;
  row.val_l1 = 0.0625;
  row.val_rel_l2 = 0.25;
  row.val_persistence_l1 = 0.125;
  row.val_persistence_rel_l2 = 0.375;
  s.rows = {row};
  s.straggler_rows = "8,1,4,1,3.000,1.000,3.000\n";
  return s;
}

absl::Status DecodeStatus(const std::vector<uint8_t>& bytes) { return DecodeCheckpoint(bytes, "ckpt-21.bin").status(); }

// Rewrites the header CRC after a deliberate header edit.
void ResealHeader(std::vector<uint8_t>& bytes) {
  const uint32_t crc = Crc32(std::span<const uint8_t>(bytes.data(), 28));
  std::memcpy(bytes.data() + 28, &crc, sizeof(crc));
}

TEST(CheckpointFormat, RoundTripKeepsEveryField) {
  const TrainingState s = SmallState();
  const std::vector<uint8_t> bytes = EncodeCheckpoint(s);
  absl::StatusOr<TrainingState> back = DecodeCheckpoint(bytes, "ckpt-21.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
  EXPECT_TRUE(std::signbit(back->g.params.back()));  // bits, not just values
  EXPECT_EQ(EncodeCheckpoint(*back), bytes);
}

// --g-ema's average is its own section, written only when the run keeps one.
TEST(CheckpointFormat, AGeneratorAverageRoundTripsInItsOwnSection) {
  TrainingState s = SmallState();
  const size_t without = EncodeCheckpoint(s).size();
  s.g_average = s.g;
  s.g_average->params = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  const std::vector<uint8_t> bytes = EncodeCheckpoint(s);
  EXPECT_GT(bytes.size(), without);
  absl::StatusOr<TrainingState> back = DecodeCheckpoint(bytes, "ckpt-21.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
  absl::StatusOr<TrainingState> plain = DecodeCheckpoint(EncodeCheckpoint(SmallState()), "ckpt-21.bin");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->g_average.has_value());
  s.g_average->buffers.pop_back();
  EXPECT_THAT(DecodeStatus(EncodeCheckpoint(s)).message(),
              HasSubstr("generator average section: the values do not match the layout"));
}

// --augment's policy is its own section, written only by a run that augments, so a run
// without one writes the bytes it wrote before the setting existed.
TEST(CheckpointFormat, AnAugmentPolicyRoundTripsInItsOwnSection) {
  TrainingState s = SmallState();
  const std::vector<uint8_t> plain = EncodeCheckpoint(s);
  s.augment = "color,translation,cutout";
  const std::vector<uint8_t> bytes = EncodeCheckpoint(s);
  EXPECT_GT(bytes.size(), plain.size());
  absl::StatusOr<TrainingState> back = DecodeCheckpoint(bytes, "ckpt-21.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->augment, "color,translation,cutout");
  EXPECT_EQ(*back, s);
  s.augment = "off";
  EXPECT_EQ(EncodeCheckpoint(s), plain);
  absl::StatusOr<TrainingState> without = DecodeCheckpoint(plain, "ckpt-21.bin");
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->augment, "off");
}

// An overlapped run's hidden all-reduce time of the epoch in progress: its own section,
// so the epoch's exposed column resumes right; a run without keeps the bytes it had.
TEST(CheckpointFormat, TheHiddenAllReduceTimeRoundTripsInItsOwnSection) {
  TrainingState s = SmallState();
  const std::vector<uint8_t> plain = EncodeCheckpoint(s);
  s.epoch.sums.allreduce_hidden_s = 0.375;
  const std::vector<uint8_t> bytes = EncodeCheckpoint(s);
  EXPECT_GT(bytes.size(), plain.size());
  absl::StatusOr<TrainingState> back = DecodeCheckpoint(bytes, "ckpt-21.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->epoch.sums.allreduce_hidden_s, 0.375);
  EXPECT_EQ(*back, s);
  s.epoch.sums.allreduce_hidden_s = 0;
  EXPECT_EQ(EncodeCheckpoint(s), plain);
}

// The settings record (issue 45): its own section with a digest; absent in a checkpoint
// from before it, which decodes without one; a digest that does not match its pairs is
// damage.
TEST(CheckpointFormat, TheSettingsRecordRoundTripsWithItsDigest) {
  TrainingState s = SmallState();
  const std::vector<uint8_t> plain = EncodeCheckpoint(s);
  s.settings = std::map<std::string, std::string>{{"lr", "0.001"}, {"quality", "fast"}};
  const std::vector<uint8_t> bytes = EncodeCheckpoint(s);
  absl::StatusOr<TrainingState> back = DecodeCheckpoint(bytes, "ckpt-21.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
  absl::StatusOr<TrainingState> old = DecodeCheckpoint(plain, "ckpt-21.bin");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->settings.has_value());
  // The pairs edited and the CRCs recomputed: the digest still says "fast".
  std::vector<uint8_t> edited = bytes;
  const std::string fast = "fast";
  auto at = std::search(edited.begin(), edited.end(), fast.begin(), fast.end());
  ASSERT_NE(at, edited.end());
  std::memcpy(&*at, "full", 4);
  const uint32_t crc =
      Crc32(std::span<const uint8_t>(edited.data() + kCheckpointHeaderBytes, edited.size() - kCheckpointHeaderBytes));
  std::memcpy(edited.data() + 24, &crc, sizeof(crc));
  ResealHeader(edited);
  EXPECT_THAT(DecodeStatus(edited).message(), HasSubstr("ckpt-21.bin: settings section: its digest"));
}

TEST(CheckpointFormat, TruncatedFilesAreTornWrites) {
  std::vector<uint8_t> bytes = EncodeCheckpoint(SmallState());
  bytes.resize(bytes.size() - 1);
  EXPECT_EQ(DecodeStatus(bytes).code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("ckpt-21.bin: truncated: the header announces"));
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("(a torn write?)"));
  bytes.resize(10);
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("truncated: 10 bytes, less than the 32-byte header"));
  EXPECT_THAT(DecodeStatus({}).message(), HasSubstr("truncated: 0 bytes"));
}

TEST(CheckpointFormat, EveryFlippedPayloadByteFailsTheChecksum) {
  const std::vector<uint8_t> good = EncodeCheckpoint(SmallState());
  for (size_t i = kCheckpointHeaderBytes; i < good.size(); i += 7) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x10;
    const absl::Status s = DecodeStatus(bad);
    ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << "byte " << i;
    ASSERT_THAT(s.message(), HasSubstr("checksum mismatch (stored crc32 ")) << "byte " << i;
    ASSERT_THAT(s.message(), HasSubstr("the file is corrupt"));
  }
}

TEST(CheckpointFormat, DamagedHeaderMagicAndVersion) {
  const std::vector<uint8_t> good = EncodeCheckpoint(SmallState());
  std::vector<uint8_t> bad = good;
  bad[0] = 'X';
  EXPECT_THAT(DecodeStatus(bad).message(), HasSubstr("ckpt-21.bin: not a gantry checkpoint (bad magic bytes)"));

  bad = good;
  bad[16] ^= 1;  // payload size, caught by the header's own checksum
  EXPECT_THAT(DecodeStatus(bad).message(), HasSubstr("header checksum mismatch: the header is corrupt"));

  bad = good;
  bad[8] = 2;  // version 2, properly sealed: a newer format, not corruption
  ResealHeader(bad);
  EXPECT_EQ(DecodeStatus(bad).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(DecodeStatus(bad).message(),
              HasSubstr("checkpoint format version 2, this gantry reads version 1 (written by another gantry version?)"));
}

TEST(CheckpointFormat, TrailingBytesAreRefused) {
  std::vector<uint8_t> bytes = EncodeCheckpoint(SmallState());
  bytes.push_back(0);
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("1 unexpected bytes after the payload"));
}

TEST(CheckpointFormat, MissingDuplicateAndUnknownSections) {
  ByteWriter pos;
  pos.I64(1);
  std::vector<uint8_t> bytes = FrameCheckpoint({{SectionTag::kShares, {}}});
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("ckpt-21.bin: has no position section"));
  bytes = FrameCheckpoint({{SectionTag::kShares, {}}, {SectionTag::kShares, {}}});
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("the shares section occurs twice"));
  bytes = FrameCheckpoint({{SectionTag::kPosition, pos.bytes()}});
  EXPECT_THAT(DecodeStatus(bytes).message(), HasSubstr("ckpt-21.bin: position section: ends early, reading batch size"));
  // A section of a later format is skipped.
  const std::vector<uint8_t> good = EncodeCheckpoint(SmallState());
  auto sections = UnframeCheckpoint(good, "x");
  ASSERT_TRUE(sections.ok());
  std::vector<SectionBytes> with_extra{{static_cast<SectionTag>(99), {1, 2, 3}}};
  for (const SectionView& v : *sections) with_extra.push_back({v.tag, {v.bytes.begin(), v.bytes.end()}});
  absl::StatusOr<TrainingState> back = DecodeCheckpoint(FrameCheckpoint(with_extra), "x");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, SmallState());
}

TEST(CheckpointFormat, ValuesThatDoNotFitTheLayoutAreDamage) {
  TrainingState s = SmallState();
  s.g.params.pop_back();
  EXPECT_THAT(DecodeStatus(EncodeCheckpoint(s)).message(),
              HasSubstr("generator section: the values do not match the layout (8 parameters for 9"));
}

}  // namespace
}  // namespace gantry
