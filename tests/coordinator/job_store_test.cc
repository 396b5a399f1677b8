#include "coordinator/store/job_store.h"

#include "coordinator/store/sqlite_db.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

v1::Job MakeJob(const std::string& id, v1::JobState state) {
  v1::Job job;
  job.set_id(id);
  job.set_state(state);
  job.mutable_spec()->add_batch_sizes(64);
  return job;
}

std::unique_ptr<JobStore> OpenStore(const std::string& path) {
  absl::StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

v1::JobEvent StateEvent(const std::string& job_id, v1::JobState state) {
  v1::JobEvent event;
  event.set_job_id(job_id);
  event.mutable_state()->set_state(state);
  return event;
}

TEST(JobStore, JobsPersistAcrossReopen) {
  const std::string path = testing::MakeTempDir("store") + "/jobs.db";
  {
    std::unique_ptr<JobStore> store = OpenStore(path);
    ASSERT_EQ(*store->NextJobNumber(), 1);
    ASSERT_TRUE(store->InsertJob(1, MakeJob("job-1", v1::JOB_STATE_QUEUED)).ok());
    ASSERT_TRUE(store->AppendEvent(StateEvent("job-1", v1::JOB_STATE_QUEUED)).ok());
    ASSERT_TRUE(store->PutEpoch("job-1", testing::EpochRow(64, 1, 2)).ok());
    v1::Group group;
    group.set_id("group-1");
    group.set_world_size(2);
    ASSERT_TRUE(store->PutGroup(1, group).ok());
  }
  std::unique_ptr<JobStore> store = OpenStore(path);
  EXPECT_EQ(store->GetJob("job-1")->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(*store->NextJobNumber(), 2);
  EXPECT_EQ(store->EventsAfter("job-1", 0, 10)->size(), 1u);
  EXPECT_EQ(store->Epochs("job-1")->at(0).steps(), testing::EpochRow(64, 1, 2).steps());
  EXPECT_EQ(store->Groups()->groups.at(0).group.world_size(), 2);
  EXPECT_EQ(*store->NextGroupNumber(), 2);
}

TEST(JobStore, UnknownJobsAreNotFound) {
  std::unique_ptr<JobStore> store = OpenStore(testing::MakeTempDir("store") + "/jobs.db");
  EXPECT_TRUE(absl::IsNotFound(store->GetJob("job-9").status()));
  EXPECT_TRUE(absl::IsNotFound(store->UpdateJob(MakeJob("job-9", v1::JOB_STATE_RUNNING), v1::JOB_STATE_QUEUED)));
}

// Issue 45: two processes that share a database (two store objects on one file, as two
// coordinators would be) both read job-1 as QUEUED; the claims are compare-and-set in
// SQL, so only the first is written: the job is never handed out twice, and a cancel
// that read it queued cannot undo a claim (nor a claim a cancel).
TEST(JobStore, AJobIsClaimedOnceAcrossTwoStoresOnOneFile) {
  const std::string path = testing::MakeTempDir("store") + "/jobs.db";
  std::unique_ptr<JobStore> first = OpenStore(path);
  std::unique_ptr<JobStore> second = OpenStore(path);
  ASSERT_TRUE(first->InsertJob(1, MakeJob("job-1", v1::JOB_STATE_QUEUED)).ok());
  v1::Job seen_by_first = *first->GetJob("job-1");
  v1::Job seen_by_second = *second->GetJob("job-1");
  ASSERT_EQ(seen_by_second.state(), v1::JOB_STATE_QUEUED);

  seen_by_first.set_state(v1::JOB_STATE_RUNNING);
  seen_by_first.set_group_id("group-1");
  ASSERT_TRUE(first->Transaction([&] { return first->UpdateJob(seen_by_first, v1::JOB_STATE_QUEUED); },
                                 Durability::kSynced).ok());
  v1::Job claim = seen_by_second;
  claim.set_state(v1::JOB_STATE_RUNNING);
  claim.set_group_id("group-2");
  const absl::Status twice =
      second->Transaction([&] { return second->UpdateJob(claim, v1::JOB_STATE_QUEUED); }, Durability::kSynced);
  EXPECT_TRUE(absl::IsAborted(twice)) << twice;
  EXPECT_THAT(twice.message(), HasSubstr("job-1 changed in the store meanwhile (it is JOB_STATE_RUNNING there"));
  v1::Job cancel = seen_by_second;
  cancel.set_state(v1::JOB_STATE_CANCELLED);
  EXPECT_TRUE(absl::IsAborted(
      second->Transaction([&] { return second->UpdateJob(cancel, v1::JOB_STATE_QUEUED); }, Durability::kSynced)));
  const v1::Job stored = *second->GetJob("job-1");
  EXPECT_EQ(stored.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(stored.group_id(), "group-1");

  // The other way round: a cancel first, then a claim that read the job queued.
  ASSERT_TRUE(first->InsertJob(2, MakeJob("job-2", v1::JOB_STATE_QUEUED)).ok());
  v1::Job queued = *second->GetJob("job-2");
  v1::Job cancelled = *first->GetJob("job-2");
  cancelled.set_state(v1::JOB_STATE_CANCELLED);
  ASSERT_TRUE(first->UpdateJob(cancelled, v1::JOB_STATE_QUEUED).ok());
  queued.set_state(v1::JOB_STATE_RUNNING);
  EXPECT_TRUE(absl::IsAborted(second->UpdateJob(queued, v1::JOB_STATE_QUEUED)));
  EXPECT_EQ(first->GetJob("job-2")->state(), v1::JOB_STATE_CANCELLED);
}

TEST(JobStore, ListsPageInOrderAndFilterByState) {
  std::unique_ptr<JobStore> store = OpenStore(testing::MakeTempDir("store") + "/jobs.db");
  for (int i = 1; i <= 5; ++i) {
    const v1::JobState state = i % 2 ? v1::JOB_STATE_QUEUED : v1::JOB_STATE_SUCCEEDED;
    ASSERT_TRUE(store->InsertJob(i, MakeJob("job-" + std::to_string(i), state)).ok());
  }
  absl::StatusOr<JobStore::JobPage> page = store->ListJobs(v1::JOB_STATE_UNSPECIFIED, 0, 2);
  ASSERT_EQ(page->jobs.size(), 2u);
  EXPECT_EQ(page->jobs[1].id(), "job-2");
  EXPECT_TRUE(page->more);
  page = store->ListJobs(v1::JOB_STATE_UNSPECIFIED, page->last_number, 10);
  ASSERT_EQ(page->jobs.size(), 3u);
  EXPECT_FALSE(page->more);
  page = store->ListJobs(v1::JOB_STATE_QUEUED, 0, 10);
  ASSERT_EQ(page->jobs.size(), 3u);
  EXPECT_EQ(page->jobs[2].id(), "job-5");
  EXPECT_EQ(store->JobsInStates({v1::JOB_STATE_SUCCEEDED})->jobs.size(), 2u);
}

TEST(JobStore, EventsAreNumberedPerJob) {
  std::unique_ptr<JobStore> store = OpenStore(testing::MakeTempDir("store") + "/jobs.db");
  ASSERT_TRUE(store->InsertJob(1, MakeJob("job-1", v1::JOB_STATE_QUEUED)).ok());
  ASSERT_TRUE(store->InsertJob(2, MakeJob("job-2", v1::JOB_STATE_QUEUED)).ok());
  EXPECT_EQ(store->AppendEvent(StateEvent("job-1", v1::JOB_STATE_QUEUED))->sequence(), 1);
  EXPECT_EQ(store->AppendEvent(StateEvent("job-2", v1::JOB_STATE_QUEUED))->sequence(), 1);
  EXPECT_EQ(store->AppendEvent(StateEvent("job-1", v1::JOB_STATE_RUNNING))->sequence(), 2);
  absl::StatusOr<std::vector<v1::JobEvent>> after = store->EventsAfter("job-1", 1, 10);
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ(after->at(0).state().state(), v1::JOB_STATE_RUNNING);
}

TEST(JobStore, ResentEpochRowsAndStragglersAreStoredOnce) {
  std::unique_ptr<JobStore> store = OpenStore(testing::MakeTempDir("store") + "/jobs.db");
  ASSERT_TRUE(store->InsertJob(1, MakeJob("job-1", v1::JOB_STATE_RUNNING)).ok());
  v1::EpochMetrics row = testing::EpochRow(64, 1, 2);
  EXPECT_TRUE(*store->PutEpoch("job-1", row));
  EXPECT_TRUE(*store->PutEpoch("job-1", testing::EpochRow(64, 2, 2)));
  EXPECT_FALSE(*store->PutEpoch("job-1", row));  // identical: nothing changes
  row.set_seconds(99);                            // a resumed attempt's row replaces it
  EXPECT_TRUE(*store->PutEpoch("job-1", row));
  absl::StatusOr<std::vector<v1::EpochMetrics>> rows = store->Epochs("job-1");
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->at(0).seconds(), 99);  // keeps its place
  v1::StragglerEvent event;
  event.set_batch_size(64);
  event.set_step(40);
  event.set_rank(1);
  EXPECT_TRUE(*store->AddStraggler("job-1", event));
  EXPECT_FALSE(*store->AddStraggler("job-1", event));
  EXPECT_EQ(store->Stragglers("job-1")->size(), 1u);
}

TEST(JobStore, ANewerSchemaIsRefused) {
  const std::string path = testing::MakeTempDir("store") + "/jobs.db";
  {
    absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version = 99").ok());
  }
  absl::StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status()));
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("schema version 99"));
}

TEST(JobStore, AnUnopenablePathIsNamed) {
  absl::StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open("/nonexistent-folder/jobs.db");
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status()));
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("/nonexistent-folder/jobs.db"));
}

}  // namespace
}  // namespace gantry
