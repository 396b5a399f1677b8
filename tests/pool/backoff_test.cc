#include "worker/pool/backoff.h"

#include "common/clock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

constexpr BackoffPolicy kNoJitter{.initial_seconds = 0.5, .max_seconds = 4, .multiplier = 2, .jitter = 0};

TEST(Backoff, ReadyAtOnceBeforeAnyFailure) {
  FakeClock clock(1'000'000'000);
  Backoff backoff(clock, kNoJitter);
  EXPECT_TRUE(backoff.Ready());
  EXPECT_EQ(backoff.failures(), 0);
}

TEST(Backoff, DelaysDoubleUpToTheCap) {
  FakeClock clock;
  Backoff backoff(clock, kNoJitter);
  for (double expected : {0.5, 1.0, 2.0, 4.0, 4.0, 4.0}) {
    backoff.RecordFailure();
    EXPECT_DOUBLE_EQ(backoff.last_delay_seconds(), expected);
    EXPECT_FALSE(backoff.Ready());
    EXPECT_NEAR(backoff.SecondsUntilReady(), expected, 1e-9);
    clock.AdvanceMillis(expected * 1000 - 1);
    EXPECT_FALSE(backoff.Ready()) << "1 ms early";
    clock.AdvanceMillis(1);
    EXPECT_TRUE(backoff.Ready());
  }
  EXPECT_EQ(backoff.failures(), 6);
}

TEST(Backoff, ASuccessStartsOver) {
  FakeClock clock;
  Backoff backoff(clock, kNoJitter);
  backoff.RecordFailure();
  backoff.RecordFailure();
  backoff.RecordSuccess();
  EXPECT_TRUE(backoff.Ready()) << "no wait after a success";
  EXPECT_EQ(backoff.failures(), 0);
  backoff.RecordFailure();
  EXPECT_DOUBLE_EQ(backoff.last_delay_seconds(), 0.5);
}

TEST(Backoff, JitterOnlyShortensWithinItsFraction) {
  FakeClock clock;
  BackoffPolicy policy = kNoJitter;
  policy.jitter = 0.25;
  Backoff backoff(clock, policy, /*seed=*/7);
  bool shortened = false;
  for (int i = 0; i < 50; ++i) {
    backoff.RecordFailure();
    const double nominal = std::min(4.0, 0.5 * (1 << std::min(i, 4)));
    EXPECT_LE(backoff.last_delay_seconds(), nominal);
    EXPECT_GE(backoff.last_delay_seconds(), 0.75 * nominal);
    shortened |= backoff.last_delay_seconds() < nominal;
  }
  EXPECT_TRUE(shortened);
}

TEST(Backoff, ManyFailuresStayAtTheCap) {
  FakeClock clock;
  Backoff backoff(clock, kNoJitter);
  for (int i = 0; i < 5000; ++i) backoff.RecordFailure();
  EXPECT_DOUBLE_EQ(backoff.last_delay_seconds(), 4.0);
}

}  // namespace
}  // namespace gantry
