// Fuzz target: the coordinator's stored job records, as a damaged or hand-edited job
// database can hold them (coordinator/store/stored_records.h, the SQLite job store, and the
// Coordinator that recovers from it).
//
// Input: one mode byte, then the record's bytes. Mode bits 0-2: the row's state column
// (0-6; 7: a value no JobState has). Bit 3: the row's id column is "job-9", not its
// row's "job-2". Bit 4: the record is kept as given; clear, the bytes are appended to a
// well-formed queued job-2 record (so fields override a readable job).
//
// Invariants: DecodeJobRow accepts only a record that names its row's id and state. In
// a store holding the record as row 2 between two good queued jobs, Coordinator::Recover
// succeeds (no exception, no abort: the bad record is set aside), ListJobs lists both
// good jobs and row 2 exactly once (as a job or as unreadable), and GetJob of the row
// answers OK, DATA_LOSS or NOT_FOUND; a restart over the same store does the same.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/clock.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/validation/data_roots.h"
#include "coordinator/store/sqlite_job_store.h"
#include "coordinator/store/stored_records.h"
#include "google/protobuf/stubs/logging.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_support.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

// A scratch folder of this process: a data root with mnist/ in it, and the database.
// The name is never destroyed (it lives until exit): the atexit cleanup below runs after
// static destructors would have freed a plain static string.
const std::string& Scratch() {
  static const std::string& dir = *new std::string([] {
    const std::string d = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/gantry-fuzz-jobs-" +
                          std::to_string(getpid());
    fs::create_directories(d + "/root/mnist");
    std::atexit([] { fs::remove_all(Scratch()); });
    return d;
  }());
  return dir;
}

v1::Job GoodJob(int64_t number) {
  v1::Job job;
  job.set_id(JobId(number));
  job.set_state(v1::JOB_STATE_QUEUED);
  job.set_max_attempts(3);
  v1::RunSpec* spec = job.mutable_spec();
  spec->set_dataset("mnist");
  spec->set_data_dir(Scratch() + "/root/mnist");
  spec->add_batch_sizes(8);
  spec->mutable_epochs()->set_value(1);
  return job;
}

std::unique_ptr<SqliteJobStore> StoreWithRow(const JobRow& row) {
  const std::string db = Scratch() + "/jobs.db";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(db);
  FUZZ_EXPECT(store.ok(), std::string(store.status().message()).c_str());
  FUZZ_EXPECT((*store)->InsertJob(1, GoodJob(1)).ok(), "insert job-1");
  absl::StatusOr<SqliteStatement> insert =
      (*store)->db().Prepare("INSERT INTO jobs (number, id, state, job) VALUES (?1, ?2, ?3, ?4)");
  FUZZ_EXPECT(insert.ok(), "prepare");
  FUZZ_EXPECT(insert->Bind(1, row.number).Bind(2, row.id).Bind(3, row.state).BindBlob(4, row.record).Run().ok(),
              "insert the fuzzed row");
  FUZZ_EXPECT((*store)->InsertJob(3, GoodJob(3)).ok(), "insert job-3");
  return *std::move(store);
}

// Recovers a Coordinator over the store and checks what it serves.
void CheckServed(std::unique_ptr<JobStore> store, const SpecValidator& validator, const JobRow& row) {
  FakeClock clock(1'000'000'000'000);
  Coordinator core(std::move(store), validator, CoordinatorOptions{}, clock, clock);
  const absl::Status recovered = core.Recover();
  FUZZ_EXPECT(recovered.ok(), std::string(recovered.message()).c_str());
  const absl::StatusOr<v1::ListJobsResponse> listed = core.ListJobs(v1::ListJobsRequest());
  FUZZ_EXPECT(listed.ok(), std::string(listed.status().message()).c_str());
  int good = 0, fuzzed = 0;
  for (const v1::Job& job : listed->jobs()) {
    if (job.id() == "job-1" || job.id() == "job-3") ++good;
    if (job.id() == row.id) ++fuzzed;
  }
  for (const v1::UnreadableJob& bad : listed->unreadable_jobs()) fuzzed += bad.number() == row.number;
  FUZZ_EXPECT(good == 2, "both good jobs are listed");
  FUZZ_EXPECT(fuzzed == 1, "the fuzzed row is listed once, as a job or as unreadable");
  const absl::StatusOr<v1::Job> got = core.GetJob(row.id);
  FUZZ_EXPECT(got.ok() || absl::IsDataLoss(got.status()) || absl::IsNotFound(got.status()),
              std::string(got.status().message()).c_str());
}

}  // namespace
}  // namespace gantry

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  // Protobuf logs every string that is not UTF-8, spdlog every record set aside: noise.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), spdlog::set_level(spdlog::level::off), true);
  (void)quiet;
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  JobRow row;
  row.number = 2;
  row.id = (mode & 8) ? "job-9" : "job-2";
  row.state = mode & 7;
  row.record.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((mode & 16) == 0) row.record = GoodJob(2).SerializeAsString() + row.record;

  const absl::StatusOr<v1::Job> decoded = DecodeJobRow(row);
  if (decoded.ok()) {
    FUZZ_EXPECT(decoded->id() == row.id && decoded->id() == JobId(row.number), "a readable record is its row's");
    FUZZ_EXPECT(decoded->state() == row.state, "a readable record has its row's state");
  }
  absl::StatusOr<DataRoots> roots = DataRoots::Create({Scratch() + "/root"});
  FUZZ_EXPECT(roots.ok(), "data root");
  const SpecValidator validator(*roots);
  CheckServed(StoreWithRow(row), validator, row);
  // A restart over what the first one left (the row set aside, or the job failed).
  absl::StatusOr<std::unique_ptr<JobStore>> reopened = JobStore::Open(Scratch() + "/jobs.db");
  FUZZ_EXPECT(reopened.ok(), std::string(reopened.status().message()).c_str());
  CheckServed(*std::move(reopened), validator, row);
  return 0;
}
