#include "coordinator/validation/spec_validator.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

class SpecValidatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = testing::MakeTempDir("validator");
    data_ = dir + "/root/mnist";
    std::filesystem::create_directories(data_);
    std::filesystem::create_directories(dir + "/elsewhere");
    outside_ = dir + "/elsewhere";
    absl::StatusOr<DataRoots> roots = DataRoots::Create({dir + "/root"});
    ASSERT_TRUE(roots.ok());
    validator_ = std::make_unique<SpecValidator>(*roots);
  }
  std::string Error(const v1::SubmitJobRequest& request) {
    absl::StatusOr<ResolvedSpec> r = validator_->CheckSubmit(request);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    return std::string(r.status().message());
  }
  std::string data_, outside_;
  std::unique_ptr<SpecValidator> validator_;
};

TEST_F(SpecValidatorTest, AValidSpecResolvesWithTheWorkersDefaults) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {64, 128}, 3, 2);
  absl::StatusOr<ResolvedSpec> r = validator_->CheckSubmit(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->batch_sizes, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(r->epochs, 3);
  EXPECT_EQ(r->seed, 7u);
  EXPECT_EQ(r->straggler_window, 20);  // the worker's default
  request.mutable_spec()->clear_batch_sizes();
  EXPECT_EQ(validator_->CheckSubmit(request)->batch_sizes, (std::vector<int64_t>{64}));
}

// Each setting alone is valid; together they are not: checked once all are known.
TEST_F(SpecValidatorTest, TheFlowDatasetNeedsTheConditionalModelAndAFolder) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->set_dataset("flow");
  EXPECT_THAT(Error(request), HasSubstr("spec: --dataset flow trains on frame pairs, which --model dcgan cannot take; "
                                        "use --model pix2pix"));
}

// Unrolled training through the coordinator: the RunSpec's fields are the worker's
// settings, checked at submission (a pool never receives a run it would refuse).
TEST_F(SpecValidatorTest, UnrolledTrainingIsCheckedAtSubmission) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {8}, 1, 1);
  v1::RunSpec& spec = *request.mutable_spec();
  spec.set_model("pix2pix");
  spec.set_dataset("flow");
  spec.mutable_image_size()->set_value(32);
  spec.mutable_unroll()->set_value(4);
  spec.set_unroll_loss("last");
  spec.mutable_unroll_curriculum()->set_value(2);
  EXPECT_TRUE(validator_->CheckSubmit(request).ok()) << validator_->CheckSubmit(request).status();
  spec.mutable_pushforward()->set_value(true);
  spec.set_unroll_loss("every");
  EXPECT_THAT(Error(request), HasSubstr("--pushforward trains on the last step's loss only"));
  spec.mutable_unroll()->set_value(65);
  EXPECT_THAT(Error(request), HasSubstr("--unroll"));
  spec.set_model("dcgan");
  spec.set_dataset("mnist");
  spec.mutable_unroll()->set_value(2);
  spec.clear_pushforward();
  EXPECT_THAT(Error(request), HasSubstr("--unroll and its companions train the next-frame model on flow fields"));
}

TEST_F(SpecValidatorTest, BadFieldsAreNamed) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->mutable_lr()->set_value(-1);
  EXPECT_THAT(Error(request), HasSubstr("spec.lr: --lr: bad value '-1'"));
  request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->set_dataset("cifar");
  EXPECT_THAT(Error(request), HasSubstr("spec.dataset"));
  request = testing::SweepRequest(data_, {64}, 0, 1);
  EXPECT_THAT(Error(request), HasSubstr("spec.epochs"));
  request = testing::SweepRequest(data_, {64, -5}, 1, 1);
  EXPECT_THAT(Error(request), HasSubstr("spec.batch_sizes"));
  // Whatever this build's worker knows of mixed precision, fp64 is not a precision.
  request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->set_precision("fp64");
  EXPECT_THAT(Error(request), HasSubstr("spec.precision"));
}

// Issue 29: the coordinator accepted --straggler-window 2147483648 (narrowed to a negative
// int, it aborted the pool that took the job, which was then requeued into the next pool).
// It is refused at submission with the worker's own words, as is every number out of range.
TEST_F(SpecValidatorTest, NumbersOutOfRangeAreRefusedAtSubmissionNotOnAPool) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->mutable_straggler_window()->set_value(2147483648);
  EXPECT_THAT(Error(request), HasSubstr("spec.straggler_window: --straggler-window: bad value '2147483648' (an "
                                        "integer in [1, 10000])"));
  request.mutable_spec()->mutable_straggler_window()->set_value(2147483647);
  EXPECT_THAT(Error(request), HasSubstr("--straggler-window: bad value '2147483647'"));
  request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->mutable_ngf()->set_value(1 << 20);
  EXPECT_THAT(Error(request), HasSubstr("spec.ngf: --ngf: bad value '1048576' (an integer in [1, 1024])"));
  request = testing::SweepRequest(data_, {64}, 1, 1);
  request.mutable_spec()->mutable_straggler_window()->set_value(10000);
  EXPECT_TRUE(validator_->CheckSubmit(request).ok());
}

TEST_F(SpecValidatorTest, DataOutsideTheRootsIsRefused) {
  EXPECT_THAT(Error(testing::SweepRequest(outside_, {64}, 1, 1)), HasSubstr("spec.data_dir"));
  EXPECT_THAT(Error(testing::SweepRequest(data_ + "/../../elsewhere", {64}, 1, 1)), HasSubstr("outside the data roots"));
  // Unset, the dataset's Debian location is checked, and it is not under this root.
  v1::SubmitJobRequest request = testing::SweepRequest("", {64}, 1, 1);
  EXPECT_THAT(Error(request), HasSubstr("spec.data_dir (unset"));
}

TEST_F(SpecValidatorTest, AFileIsNotADataFolder) {
  const std::string file = data_ + "/train-images-idx3-ubyte";
  std::ofstream(file) << "not a folder";
  EXPECT_THAT(Error(testing::SweepRequest(file, {64}, 1, 1)),
              HasSubstr("/root/mnist/train-images-idx3-ubyte' is a file, expected a folder"));
}

TEST_F(SpecValidatorTest, NamesAreOneLineOfPrintableText) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {64}, 1, 1);
  request.set_name("sweep\n\x1b[2Jjob-1 succeeded");  // would forge a row of `gantry jobs`
  EXPECT_THAT(Error(request), HasSubstr("name: holds a control character or invalid UTF-8 (byte 0x0a at position 5)"));
  request.set_name("bell\x07");
  EXPECT_THAT(Error(request), HasSubstr("byte 0x07 at position 4"));
  request.set_name("csi\xc2\x9b" "31m");
  EXPECT_THAT(Error(request), HasSubstr("name:"));
  request.set_name("DCGAN bf16 — essai n°2");
  EXPECT_TRUE(validator_->CheckSubmit(request).ok());
}

TEST_F(SpecValidatorTest, SubmissionBoundsAreNamed) {
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {64, 2}, 1, 4);
  EXPECT_THAT(Error(request), HasSubstr("batch 2 is smaller than world_size 4"));
  request = testing::SweepRequest(data_, {64}, 1, -1);
  EXPECT_THAT(Error(request), HasSubstr("world_size"));
  request = testing::SweepRequest(data_, {64}, 1, 1);
  request.set_max_attempts(1000);
  EXPECT_THAT(Error(request), HasSubstr("max_attempts"));
  request.set_max_attempts(0);
  request.set_name(std::string(200, 'x'));
  EXPECT_THAT(Error(request), HasSubstr("name"));
  request.set_name("ok");
  request.mutable_spec()->set_data_dir(std::string(5000, 'a'));
  EXPECT_THAT(Error(request), HasSubstr("spec.data_dir: longer than"));
}

// Issue 18: a batch that leaves a rank one row aborted every attempt in BatchNorm; with a
// world size the coordinator refuses it at submission, with or without --sync-bn.
TEST_F(SpecValidatorTest, ABatchThatLeavesARankOneRowIsRefusedWhenTheWorldSizeIsKnown) {
  for (int64_t batch : {2, 3}) {
    EXPECT_THAT(Error(testing::SweepRequest(data_, {64, batch}, 1, 2)),
                HasSubstr(absl::StrCat("spec.batch_sizes: --batch-size ", batch, " on 2 rank(s) gives a rank 1 row(s), "
                                       "but dcgan's BatchNorm needs at least 2 per rank; use a batch size of at least "
                                       "4, or --sync-bn")));
  }
  EXPECT_THAT(Error(testing::SweepRequest(data_, {1}, 1, 1)), HasSubstr("BatchNorm needs at least 2 per rank"));
  v1::SubmitJobRequest request = testing::SweepRequest(data_, {2}, 1, 2);
  request.mutable_spec()->mutable_sync_bn()->set_value(true);  // statistics over both ranks' rows
  EXPECT_TRUE(validator_->CheckSubmit(request).ok());
  request = testing::SweepRequest(data_, {1}, 1, 1);
  request.mutable_spec()->mutable_sync_bn()->set_value(true);
  EXPECT_THAT(Error(request), HasSubstr("BatchNorm needs at least 2 rows in a batch"));
  EXPECT_TRUE(validator_->CheckSubmit(testing::SweepRequest(data_, {4}, 1, 2)).ok());
  EXPECT_TRUE(validator_->CheckSubmit(testing::SweepRequest(data_, {3}, 1, 0)).ok()) << "any group: checked there";
}

}  // namespace
}  // namespace gantry
