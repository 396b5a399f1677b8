// Every write path of the Coordinator with its store failing (FaultyJobStore): the call
// fails with the store's error, the store is as before (a failed transaction is rolled
// back), memory agrees with the store (a restarted coordinator would see the same
// groups), no log line claims the change, and the same call succeeds once the store
// works again.
#include <functional>

#include "coordinator/store/sqlite_db.h"
#include "coordinator/store/sqlite_job_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/log_capture.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CoordinatorFixture;
using testing::Report;

constexpr double kLeaseSeconds = 10;

// Everything in the store, read through a second connection, as one comparable string.
std::string DumpStore(const CoordinatorFixture& f) {
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(f.db_path());
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return "";
  std::string dump;
  const JobStore::GroupRows groups = *(*store)->Groups();
  for (const JobStore::StoredGroup& g : groups.groups) absl::StrAppend(&dump, "group ", g.group.ShortDebugString(), "\n");
  const JobStore::JobPage page = *(*store)->ListJobs(v1::JOB_STATE_UNSPECIFIED, 0, 1000);
  for (const v1::Job& job : page.jobs) {
    absl::StrAppend(&dump, "job ", job.ShortDebugString(), "\n");
    const std::vector<v1::JobEvent> events = *(*store)->EventsAfter(job.id(), 0, 1000);
    for (const v1::JobEvent& e : events) absl::StrAppend(&dump, "  event ", e.ShortDebugString(), "\n");
    absl::StrAppend(&dump, "  epochs ", (*store)->Epochs(job.id())->size(), " stragglers ",
                    (*store)->Stragglers(job.id())->size(), "\n");
  }
  return dump;
}

// The Coordinator's in-memory view of the groups (heartbeat ages left out).
std::string DumpMemory(CoordinatorFixture& f) {
  std::string dump;
  const v1::ListGroupsResponse groups = f.core().ListGroups();
  for (v1::Group g : groups.groups()) {
    g.clear_seconds_since_heartbeat();
    absl::StrAppend(&dump, g.ShortDebugString(), "\n");
  }
  return dump;
}

// Memory and store agree: each group's state and job are the stored ones.
void ExpectMemoryMatchesStore(CoordinatorFixture& f) {
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(f.db_path());
  ASSERT_TRUE(store.ok()) << store.status();
  JobStore::GroupRows rows = *(*store)->Groups();
  std::vector<v1::Group> stored;
  for (JobStore::StoredGroup& g : rows.groups) stored.push_back(std::move(g.group));
  const v1::ListGroupsResponse memory = f.core().ListGroups();
  ASSERT_EQ(memory.groups_size(), static_cast<int>(stored.size()));
  for (int i = 0; i < memory.groups_size(); ++i) {
    EXPECT_EQ(memory.groups(i).state(), stored[i].state()) << memory.groups(i).id();
    EXPECT_EQ(memory.groups(i).job_id(), stored[i].job_id()) << memory.groups(i).id();
    if (stored[i].job_id().empty()) continue;
    absl::StatusOr<v1::Job> job = (*store)->GetJob(stored[i].job_id());
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->group_id(), stored[i].id());
  }
}

// A write path: `setup` brings the fixture to the state before the call and returns the
// call, which reports its outcome as a status.
struct WritePath {
  std::string name;
  std::vector<std::string> faults;  // store operations the call goes through
  std::function<std::function<absl::Status()>(CoordinatorFixture&)> setup;
};

// A group registered, then silent past its lease: LOST.
std::string LostGroup(CoordinatorFixture& f) {
  const std::string group = f.Register(2);
  f.clock().AdvanceMillis(static_cast<int64_t>(kLeaseSeconds * 1500));
  EXPECT_EQ(f.core().ExpireLeases(), 1);
  return group;
}

std::function<absl::Status()> FinalReport(CoordinatorFixture& f, v1::JobState state) {
  f.Submit();
  const std::string group = f.Register(2);
  v1::ReportProgressRequest done = Report(group, f.Acquire(group));
  done.set_final_state(state);
  return [&f, done] { return f.core().ReportProgress(done).status(); };
}

std::vector<WritePath> WritePaths() {
  return {
      {"SubmitJob", {"NextJobNumber", "InsertJob", "UpdateJob", "AppendEvent", "Commit"},
       [](CoordinatorFixture& f) {
         return [&f] {
           return f.core().SubmitJob(testing::SweepRequest(f.data_dir(), {8}, 2, 2)).status();
         };
       }},
      {"RegisterGroup", {"NextGroupNumber", "PutGroup", "Commit"},
       [](CoordinatorFixture& f) {
         return [&f] {
           v1::RegisterGroupRequest request;
           request.set_world_size(2);
           return f.core().RegisterGroup(request).status();
         };
       }},
      {"AcquireJob", {"GetJob", "PutGroup", "UpdateJob", "AppendEvent", "Commit"},
       [](CoordinatorFixture& f) {
         f.Submit();
         v1::AcquireJobRequest request;
         request.set_group_id(f.Register(2));
         return [&f, request] {
           absl::StatusOr<v1::AcquireJobResponse> reply = f.core().AcquireJob(request);
           if (reply.ok() && !reply->has_job()) return absl::InternalError("acquired nothing");
           return reply.status();
         };
       }},
      {"AcquireJobOfALostGroup", {"PutGroup", "Commit"},
       [](CoordinatorFixture& f) {
         v1::AcquireJobRequest request;
         request.set_group_id(LostGroup(f));
         return [&f, request] { return f.core().AcquireJob(request).status(); };
       }},
      {"HeartbeatOfALostGroup", {"PutGroup", "Commit"},
       [](CoordinatorFixture& f) {
         v1::HeartbeatRequest request;
         request.set_group_id(LostGroup(f));
         return [&f, request] { return f.core().Heartbeat(request).status(); };
       }},
      {"ReportProgressWithAnEpoch", {"GetJob", "PutEpoch", "AddStraggler", "AppendEvent", "Epochs", "UpdateJob", "Commit"},
       [](CoordinatorFixture& f) {
         f.Submit();
         const std::string group = f.Register(2);
         v1::ReportProgressRequest report = Report(group, f.Acquire(group));
         *report.add_epochs() = testing::EpochRow(8, 1, 2);
         v1::StragglerEvent* straggler = report.add_stragglers();
         straggler->set_batch_size(8);
         straggler->set_epoch(1);
         straggler->set_step(3);
         straggler->set_rank(1);
         report.mutable_progress()->set_step(5);
         return [&f, report] { return f.core().ReportProgress(report).status(); };
       }},
      {"ReportProgressSucceeded", {"PutGroup", "UpdateJob", "AppendEvent", "Commit"},
       [](CoordinatorFixture& f) { return FinalReport(f, v1::JOB_STATE_SUCCEEDED); }},
      {"ReportProgressReleased", {"PutGroup", "UpdateJob", "AppendEvent", "Commit"},
       [](CoordinatorFixture& f) { return FinalReport(f, v1::JOB_STATE_QUEUED); }},
      {"CancelJob", {"UpdateJob", "AppendEvent", "Commit"},
       [](CoordinatorFixture& f) {
         const std::string job_id = f.Submit();
         const std::string group = f.Register(2);
         f.Acquire(group);
         return [&f, job_id] { return f.core().CancelJob(job_id).status(); };
       }},
      {"ExpireLeases", {"PutGroup", "GetJob", "UpdateJob", "AppendEvent", "Commit"},
       [](CoordinatorFixture& f) {
         f.Submit();
         const std::string group = f.Register(2);
         f.Acquire(group);
         return [&f] {
           // A failed expiry renews the lease, to be tried again after it runs out.
           f.clock().AdvanceMillis(static_cast<int64_t>(kLeaseSeconds * 1500));
           return f.core().ExpireLeases() == 1 ? absl::OkStatus()
                                               : absl::UnavailableError("job store: no group was lost");
         };
       }},
  };
}

struct Case {
  WritePath path;
  std::string fault;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.path.name << " with " << c.fault << " failing"; }

class StoreFaultTest : public ::testing::TestWithParam<Case> {};

TEST_P(StoreFaultTest, AFailedWriteFailsTheCallAndNothingDrifts) {
  CoordinatorOptions options;
  options.lease_seconds = kLeaseSeconds;
  CoordinatorFixture f("store-fault", options);
  std::function<absl::Status()> call = GetParam().path.setup(f);
  const std::string store_before = DumpStore(f);
  const std::string memory_before = DumpMemory(f);

  f.faults().FailNext(GetParam().fault);
  testing::LogCapture log;
  const absl::Status failed = call();
  // No line claims a change the store refused ("job-1: cancelled (...)").
  EXPECT_THAT(log.text(), ::testing::Not(::testing::ContainsRegex("job-[0-9]+: [a-z]+ \\(")));
  ASSERT_EQ(f.faults().failures(), 1) << GetParam().fault << " was not reached";
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(std::string(failed.message()), HasSubstr("job store"));
  EXPECT_EQ(DumpStore(f), store_before);
  EXPECT_EQ(DumpMemory(f), memory_before);
  ExpectMemoryMatchesStore(f);

  // The store works again: the same call goes through, and memory still agrees.
  const absl::Status retried = call();
  EXPECT_TRUE(retried.ok()) << retried;
  EXPECT_NE(DumpStore(f), store_before);
  ExpectMemoryMatchesStore(f);
  const std::string memory_after = DumpMemory(f);
  f.Reopen();  // a restart sees what memory held (leases aside)
  EXPECT_EQ(DumpMemory(f), memory_after);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const WritePath& path : WritePaths()) {
    for (const std::string& fault : path.faults) cases.push_back({path, fault});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryWritePath, StoreFaultTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.path.name + "_" + info.param.fault;
                         });

// A COMMIT that fails (here a deferred foreign key) leaves SQLite's transaction open;
// SqliteDb must roll it back, or its writes would be committed with the next one.
TEST(SqliteDb, AFailedCommitIsRolledBack) {
  const std::string path = testing::MakeTempDir("commit") + "/t.db";
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE parent (id INTEGER PRIMARY KEY);"
                          "CREATE TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);")
                  .ok());
  const absl::Status failed = (*db)->Transaction([&] { return (*db)->Exec("INSERT INTO child VALUES (7)"); });
  EXPECT_THAT(std::string(failed.message()), HasSubstr("FOREIGN KEY"));
  const absl::Status next = (*db)->Transaction([&] { return (*db)->Exec("INSERT INTO parent VALUES (7)"); });
  ASSERT_TRUE(next.ok()) << next;
  absl::StatusOr<SqliteStatement> count = (*db)->Prepare("SELECT COUNT(*) FROM child");
  ASSERT_TRUE(count.ok());
  ASSERT_TRUE(*count->Step());
  EXPECT_EQ(count->ColumnInt64(0), 0);  // the failed transaction's row is gone
}

// A relaxed transaction commits like any other and leaves the connection synced (FULL)
// for the next one.
TEST(SqliteDb, ARelaxedTransactionCommitsAndRestoresFullSync) {
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(testing::MakeTempDir("relaxed") + "/t.db");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t (x INTEGER)").ok());
  const absl::Status relaxed =
      (*db)->Transaction([&] { return (*db)->Exec("INSERT INTO t VALUES (1)"); }, /*synced=*/false);
  ASSERT_TRUE(relaxed.ok()) << relaxed;
  absl::StatusOr<SqliteStatement> sync = (*db)->Prepare("PRAGMA synchronous");
  ASSERT_TRUE(sync.ok());
  ASSERT_TRUE(*sync->Step());
  EXPECT_EQ(sync->ColumnInt64(0), 2);  // FULL
  absl::StatusOr<SqliteStatement> count = (*db)->Prepare("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(count.ok());
  ASSERT_TRUE(*count->Step());
  EXPECT_EQ(count->ColumnInt64(0), 1);
}

}  // namespace
}  // namespace gantry
