#include "worker/pool/job_log_sink.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/write_fence.h"
#include "gtest/gtest.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

std::string Read(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

// A job's log in a run folder that a later attempt claimed: the lines written before the
// claim are all in log.txt, none after it.
TEST(JobLogSink, StopsWritingTheLogOnceTheRunFolderIsFencedOut) {
  const std::string run = ::testing::TempDir() + "/job_log_sink_fenced";
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  ASSERT_TRUE(ClaimFence(run, {.epoch = 1, .holder = "attempt 1"}, 1).ok());
  FencedFolder fence(run, {.epoch = 1, .holder = "attempt 1"});
  auto sink = std::make_shared<JobLogSink>();
  sink->set_pattern("%v");
  spdlog::logger logger("job", sink);
  ASSERT_TRUE(sink->Open(run + "/log.txt").ok());
  logger.info("before the claim");
  EXPECT_EQ(Read(run + "/log.txt"), "before the claim\n") << "written through at once, not left in a buffer";
  ASSERT_TRUE(ClaimFence(run, {.epoch = 2, .holder = "attempt 2"}, 1).ok());
  logger.info("after the claim");
  logger.flush();
  sink->Close();
  EXPECT_EQ(Read(run + "/log.txt"), "before the claim\n");
}

// Outside a fenced folder the log is buffered as before and complete once closed.
TEST(JobLogSink, AnUnfencedLogKeepsEveryLine) {
  const std::string dir = ::testing::TempDir() + "/job_log_sink_plain";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto sink = std::make_shared<JobLogSink>();
  sink->set_pattern("%v");
  spdlog::logger logger("job", sink);
  ASSERT_TRUE(sink->Open(dir + "/log.txt").ok());
  logger.info("one");
  logger.info("two");
  sink->Close();
  EXPECT_EQ(Read(dir + "/log.txt"), "one\ntwo\n");
}

}  // namespace
}  // namespace gantry
