// A job's memory estimate is checked against the machine before anything is allocated:
// what cannot fit is refused by name, with the fix.
#include "common/machine_memory.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(MachineMemory, WhatCannotFitIsRefusedNamingTheRequestAndTheFix) {
  const MemoryNeed need{.what = "--tile-batch 4096", .bytes = 40.0 * kGiB, .fix = "lower --tile-batch"};
  const absl::Status s = CheckFitsMemory(need, 8 * kGiB);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("--tile-batch 4096 needs about 40.0 GiB, more than the 8.0 GiB"));
  EXPECT_THAT(s.message(), HasSubstr(": lower --tile-batch"));
  EXPECT_TRUE(CheckFitsMemory(need, 64 * kGiB).ok());
  EXPECT_TRUE(CheckFitsMemory(need, 0).ok());  // unknown: nothing refused
}

TEST(MachineMemory, AnEstimateThatOverflowedIsRefused) {
  // An estimate may come out as inf or NaN for absurd settings: neither fits.
  EXPECT_FALSE(CheckFitsMemory({.what = "x", .bytes = std::numeric_limits<double>::infinity()}, kGiB).ok());
  EXPECT_FALSE(CheckFitsMemory({.what = "x", .bytes = std::numeric_limits<double>::quiet_NaN()}, kGiB).ok());
}

TEST(MachineMemory, ThisMachineReportsWhatItHas) {
  const int64_t available = AvailableMemoryBytes();
  EXPECT_GT(available, 16 << 20);  // any machine that runs the tests has 16 MiB free
  EXPECT_TRUE(CheckFitsMemory({.what = "a byte", .bytes = 1}).ok());
  EXPECT_FALSE(CheckFitsMemory({.what = "an exabyte", .bytes = 1e18}).ok());
}

}  // namespace
}  // namespace gantry
