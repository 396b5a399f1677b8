// The coordinator and its own database when the database is not what it wrote: a
// damaged page, a file that is not a database, one it cannot write (refused at start,
// named, with what to do); a job, group or history record that is empty, garbage or
// disagrees with its row (set aside and reported, the rest served; no exception, no
// abort); and a failed commit, after which no log line claims the change.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "coordinator/app/server.h"
#include "coordinator/store/sqlite_db.h"
#include "coordinator/store/sqlite_job_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/log_capture.h"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::CoordinatorFixture;
using testing::LogCapture;

// Runs `sql` on the database through a connection of its own (the store's stays open).
void Damage(const std::string& db_path, const std::string& sql) {
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(db_path);
  ASSERT_TRUE(db.ok()) << db.status();
  const absl::Status s = (*db)->Exec(sql);
  ASSERT_TRUE(s.ok()) << s;
}

std::string ReadStoreFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A closed database of `jobs` jobs (several pages), all of it in the main file.
std::string DatabaseWithJobs(const std::string& name, int jobs) {
  const std::string path = testing::MakeTempDir(name) + "/gantry.db";
  absl::StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  for (int i = 1; i <= jobs; ++i) {
    v1::Job job;
    job.set_id(absl::StrCat("job-", i));
    job.set_state(v1::JOB_STATE_SUCCEEDED);
    job.set_name(std::string(900, 'n'));
    EXPECT_TRUE((*store)->InsertJob(i, job).ok());
  }
  return path;  // closing the last connection checkpoints the WAL into the file
}

void Overwrite(const std::string& path, off_t offset, const std::string& bytes) {
  const int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), offset), static_cast<ssize_t>(bytes.size()));
  close(fd);
}

TEST(DamagedDatabase, IsRefusedAtStartNamingItAndHowToRecover) {
  struct Case {
    const char* what;
    std::function<void(const std::string&)> damage;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"a page header overwritten", [](const std::string& p) { Overwrite(p, 4096, std::string(16, '\xff')); },
       ".recover"},
      {"an index page overwritten", [](const std::string& p) { Overwrite(p, 2 * 4096, std::string(64, '\x07')); },
       ".recover"},
      {"cut in half", [](const std::string& p) { fs::resize_file(p, fs::file_size(p) / 2); }, ".recover"},
      {"not a database at all", [](const std::string& p) { std::ofstream(p, std::ios::trunc) << "my thesis\n"; },
       "is not a SQLite database"},
  };
  for (const Case& c : cases) {
    const std::string path = DatabaseWithJobs("damaged", 40);
    c.damage(path);
    const std::string before = ReadStoreFile(path);
    absl::StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(path);
    ASSERT_FALSE(store.ok()) << c.what;
    EXPECT_TRUE(absl::IsFailedPrecondition(store.status())) << c.what << ": " << store.status();
    EXPECT_THAT(std::string(store.status().message()), HasSubstr("--db " + path)) << c.what;
    EXPECT_THAT(std::string(store.status().message()), HasSubstr(c.expected)) << c.what << ": " << store.status();
    EXPECT_EQ(ReadStoreFile(path), before) << c.what << ": the refused file was changed";
  }
}

TEST(DamagedDatabase, TheCoordinatorBinaryRefusesToServeIt) {
  const std::string path = DatabaseWithJobs("damaged_bin", 40);
  Overwrite(path, 4096, std::string(16, '\xff'));
  const testing::Folders s = testing::MakeFolders("damaged_bin_run");
  const testing::CommandResult r = testing::RunCommand(
      absl::StrCat(GANTRY_COORDINATOR_BIN, " --listen 127.0.0.1:0 --db ", path, " --data-root ", s.root), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the database is damaged"));
  EXPECT_THAT(r.output, HasSubstr("--db NEW.db"));
}

// Writes past the first `blocks` 512-byte blocks of any file fail (EFBIG), as on a full
// disk; the coordinator must say so at start instead of failing every call later.
std::string WithFileSizeLimit(int blocks, const std::string& command) {
  return absl::StrCat("sh -c \"trap '' XFSZ; ulimit -f ", blocks, "; exec ", command, "\"");
}

TEST(UnwritableDatabase, FailsAtStartWithAClearMessage) {
  const testing::Folders s = testing::MakeFolders("unwritable");
  const std::string bin = GANTRY_COORDINATOR_BIN;
  // A new database: its first page cannot be written.
  testing::CommandResult r = testing::RunCommand(
      WithFileSizeLimit(1, absl::StrCat(bin, " --listen 127.0.0.1:0 --db ", s.dir, "/new.db --data-root ", s.root)), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--db " + s.dir + "/new.db: cannot be"));
  // An existing one, opened elsewhere too (its -wal and -shm are there and readable):
  // reading works, writing does not.
  const std::string db = DatabaseWithJobs("unwritable_db", 3);
  absl::StatusOr<std::unique_ptr<SqliteDb>> other = SqliteDb::Open(db);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->Exec("CREATE TABLE keep_wal (x); DROP TABLE keep_wal;").ok());
  r = testing::RunCommand(
      WithFileSizeLimit(1, absl::StrCat(bin, " --listen 127.0.0.1:0 --db ", db, " --data-root ", s.root)), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--db " + db + ": cannot be"));
  EXPECT_THAT(r.output, Not(HasSubstr("serving on port")));
  // SQLite's own file beside it is a folder.
  fs::create_directories(s.dir + "/odd.db-wal");
  r = testing::RunCommand(absl::StrCat(bin, " --listen 127.0.0.1:0 --db ", s.dir, "/odd.db --data-root ", s.root), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(s.dir + "/odd.db-wal (SQLite's own file beside the database) is not a regular file"));
}

// Three queued jobs; `damage` spoils job-2's row; the coordinator restarts.
class DamagedRecordTest : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(DamagedRecordTest, AQueuedJobIsSetAsideAndTheRestServed) {
  CoordinatorFixture f("damaged_record");
  for (int i = 0; i < 3; ++i) f.Submit();
  Damage(f.db_path(), GetParam().second);
  f.Reopen();  // Recover succeeds (the fixture checks)

  v1::ListJobsRequest all;
  absl::StatusOr<v1::ListJobsResponse> listed = f.core().ListJobs(all);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->jobs_size(), 2);
  EXPECT_EQ(listed->jobs(0).id(), "job-1");
  EXPECT_EQ(listed->jobs(1).id(), "job-3");
  ASSERT_EQ(listed->unreadable_jobs_size(), 1);
  EXPECT_EQ(listed->unreadable_jobs(0).number(), 2);
  EXPECT_FALSE(listed->unreadable_jobs(0).reason().empty());
  const absl::StatusOr<v1::Job> got = f.core().GetJob("job-2");
  EXPECT_TRUE(absl::IsDataLoss(got.status())) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("job-2: its stored record cannot be read"));

  // The others still run; the one set aside is never handed out, and stays aside.
  const std::string group = f.Register(2);
  EXPECT_EQ(f.Acquire(group).job().id(), "job-1");
  f.Reopen();
  listed = f.core().ListJobs(all);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->unreadable_jobs_size(), 1);
  const absl::StatusOr<std::map<v1::JobState, int64_t>> counts = f.core().CountJobsByState();
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->at(v1::JOB_STATE_QUEUED), 1);  // job-3; job-2 is not counted
}

INSTANTIATE_TEST_SUITE_P(
    Records, DamagedRecordTest,
    ::testing::Values(std::make_pair("empty", "UPDATE jobs SET job = x'' WHERE number = 2"),
                      std::make_pair("garbage", "UPDATE jobs SET job = x'ffffffff0a' WHERE number = 2"),
                      std::make_pair("another_job", "UPDATE jobs SET job = (SELECT job FROM jobs WHERE number = 1) "
                                                     "WHERE number = 2"),
                      std::make_pair("wrong_state", "UPDATE jobs SET state = 5 WHERE number = 2"),
                      std::make_pair("state_not_a_number", "UPDATE jobs SET state = 'x' WHERE number = 2")),
    [](const ::testing::TestParamInfo<std::pair<const char*, const char*>>& info) { return info.param.first; });

// `gantry jobs` against a real coordinator: one finished job's record is garbage.
TEST(DamagedRecord, GantryJobsListsTheRestAndNamesTheBadOne) {
  const testing::Folders s = testing::MakeFolders("damaged_jobs_cli");
  const std::string db = s.dir + "/gantry.db";
  {
    testing::CoordinatorProcess first(s.dir, db, s.root);
    ASSERT_TRUE(first.started());
    for (int i = 0; i < 3; ++i) {
      const testing::CommandResult r = testing::RunCommand(
          testing::Gantry(first.port(), "submit --dataset mnist --batch-size 8 --epochs 1 --data-dir " + s.data), 30);
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    ASSERT_EQ(testing::RunCommand(testing::Gantry(first.port(), "cancel job-2"), 30).exit_code, 0);
    first.process().Signal(SIGTERM);
    ASSERT_EQ(first.process().Wait(30), 0);
  }
  Damage(db, "UPDATE jobs SET job = x'0a0a' WHERE number = 2");  // a finished job: not read at start
  testing::CoordinatorProcess second(s.dir, db, s.root);
  ASSERT_TRUE(second.started());
  testing::CommandResult r = testing::RunCommand(testing::Gantry(second.port(), "jobs"), 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("job-1"));
  EXPECT_THAT(r.output, HasSubstr("job-3"));
  EXPECT_THAT(r.output, HasSubstr("job-2 (row 2): its stored record cannot be read"));
  r = testing::RunCommand(testing::Gantry(second.port(), "--json jobs"), 30, false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"unreadable_jobs\""));
  r = testing::RunCommand(testing::Gantry(second.port(), "status job-2"), 30);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("job-2: its stored record cannot be read"));
}

TEST(DamagedRecord, AGroupRecordIsLeftOutAndItsJobQueuedAgain) {
  CoordinatorFixture f("damaged_group");
  const std::string job = f.Submit();
  const std::string group = f.Register(2);
  ASSERT_EQ(f.Acquire(group).job().id(), job);
  Damage(f.db_path(), "UPDATE groups SET grp = x'' WHERE number = 1");
  f.Reopen();
  EXPECT_EQ(f.core().ListGroups().groups_size(), 0);
  const absl::StatusOr<v1::Job> requeued = f.core().GetJob(job);
  ASSERT_TRUE(requeued.ok()) << requeued.status();
  EXPECT_EQ(requeued->state(), v1::JOB_STATE_QUEUED);
  v1::HeartbeatRequest beat;
  beat.set_group_id(group);
  EXPECT_TRUE(absl::IsNotFound(f.core().Heartbeat(beat).status()));  // "register the group again"
  const std::string again = f.Register(2);
  EXPECT_EQ(f.Acquire(again).job().id(), job);
}

TEST(DamagedRecord, AGroupWhoseJobIsSetAsideIsIdleAgain) {
  CoordinatorFixture f("damaged_held_job");
  const std::string job = f.Submit();
  const std::string group = f.Register(2);
  ASSERT_EQ(f.Acquire(group).job().id(), job);
  Damage(f.db_path(), "UPDATE jobs SET job = x'' WHERE number = 1");
  f.Reopen();
  v1::HeartbeatRequest beat;
  beat.set_group_id(group);
  const absl::StatusOr<v1::HeartbeatResponse> reply = f.core().Heartbeat(beat);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->job_id(), "");  // the group drops the job it runs
  EXPECT_EQ(f.core().ListGroups().groups(0).state(), v1::GROUP_STATE_IDLE);
}

// A damaged history entry is skipped: the others are read, and a watcher resuming after
// the entry it got never goes back (an entry whose record claims sequence 0 would send
// it to the start, again and again).
TEST(DamagedRecord, HistoryEntriesThatDisagreeWithTheirRowAreSkipped) {
  CoordinatorFixture f("damaged_history");
  const std::string job = f.Submit();
  const std::string group = f.Register(2);
  v1::ReportProgressRequest report = testing::Report(group, f.Acquire(group));
  *report.add_epochs() = testing::EpochRow(8, 1, 2);
  *report.add_epochs() = testing::EpochRow(8, 2, 2);
  ASSERT_TRUE(f.core().ReportProgress(report).ok());
  absl::StatusOr<std::vector<v1::JobEvent>> before = f.core().EventsAfter(job, 0, 100);
  ASSERT_TRUE(before.ok());
  ASSERT_GE(before->size(), 4u);
  Damage(f.db_path(), "UPDATE events SET event = x'' WHERE sequence = 2");
  Damage(f.db_path(), "UPDATE epochs SET metrics = x'ff' WHERE epoch = 1");
  const absl::StatusOr<std::vector<v1::JobEvent>> after = f.core().EventsAfter(job, 0, 100);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->size(), before->size() - 1);
  for (const v1::JobEvent& e : *after) EXPECT_NE(e.sequence(), 2);
  const absl::StatusOr<v1::JobReport> report_now = f.core().GetJobReport(job);
  ASSERT_TRUE(report_now.ok()) << report_now.status();
  ASSERT_EQ(report_now->epochs_size(), 1);
  EXPECT_EQ(report_now->epochs(0).epoch(), 2);
}

// On a full disk the commit fails: the call fails and no log line says it happened.
TEST(FailedCommit, LogsNoChangeItDidNotMake) {
  struct Case {
    const char* call;
    // Brings the fixture to the state before the call and returns the call.
    std::function<std::function<absl::Status()>(CoordinatorFixture&)> setup;
    const char* claim;  // what the log must not say
  };
  const std::vector<Case> cases = {
      {"cancel a queued job",
       [](CoordinatorFixture& f) {
         const std::string id = f.Submit();
         return std::function<absl::Status()>([&f, id] { return f.core().CancelJob(id).status(); });
       },
       "cancelled"},
      {"submit",
       [](CoordinatorFixture& f) {
         return std::function<absl::Status()>(
             [&f] { return f.core().SubmitJob(testing::SweepRequest(f.data_dir(), {8}, 2, 2)).status(); });
       },
       "queued"},
      {"finish a job",
       [](CoordinatorFixture& f) {
         f.Submit();
         const std::string group = f.Register(2);
         v1::ReportProgressRequest done = testing::Report(group, f.Acquire(group));
         done.set_final_state(v1::JOB_STATE_SUCCEEDED);
         return std::function<absl::Status()>([&f, done] { return f.core().ReportProgress(done).status(); });
       },
       "succeeded"},
  };
  for (const Case& c : cases) {
    CoordinatorFixture f("failed_commit");
    const std::function<absl::Status()> call = c.setup(f);
    LogCapture log;
    f.faults().FailNext("Commit");
    const absl::Status failed = call();
    EXPECT_FALSE(failed.ok()) << c.call;
    EXPECT_EQ(f.faults().failures(), 1) << c.call;
    EXPECT_THAT(log.text(), Not(HasSubstr(c.claim))) << c.call;
    // And once the disk takes it, the line is there.
    LogCapture retried;
    EXPECT_TRUE(call().ok()) << c.call;
    EXPECT_THAT(retried.text(), HasSubstr(c.claim)) << c.call;
  }
}

}  // namespace
}  // namespace gantry
