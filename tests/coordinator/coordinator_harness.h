// Shared set-up of the coordinator tests: temporary folders, a Coordinator on a fresh
// store with fake clocks, and ready-made requests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "absl/status/statusor.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/app/server.h"
#include "coordinator/validation/spec_validator.h"
#include "tests/coordinator/faulty_job_store.h"

namespace gantry::testing {

// A new empty folder under the test's temporary directory.
std::string MakeTempDir(const std::string& name);

// A real CoordinatorServer on a free loopback port, in a new folder `name` with a data
// root and a token file holding `token` (insecure transport).
absl::StatusOr<std::unique_ptr<CoordinatorServer>> StartServerWithToken(const std::string& name,
                                                                        const std::string& token);

// A submission of a DCGAN sweep reading `data_dir`.
v1::SubmitJobRequest SweepRequest(const std::string& data_dir, const std::vector<int64_t>& batch_sizes,
                                  int64_t epochs, int world_size);

// An epochs.csv row with plausible, distinct numbers derived from (batch, epoch).
v1::EpochMetrics EpochRow(int64_t batch_size, int64_t epoch, int world_size);
// EpochRow scored by the quality judge (Frechet distance 12.5, class entropy 0.375,
// marginal entropy 2.25, confidence 0.875) with an energy figure (250 J, 0.25 J per
// sample) whose source the caller sets.
v1::EpochMetrics ScoredEpochRow(int64_t batch_size, int64_t epoch, int world_size);

// A ReportProgress request of `group` for the job it acquired, with nothing in it yet.
v1::ReportProgressRequest Report(const std::string& group, const v1::AcquireJobResponse& acquired);

// A Coordinator over a store in its own folder, with a data root holding `data/`, and
// one FakeClock for both monotonic and wall time. Reopen() drops it and opens the same
// store again, as a restarted coordinator would. The store sits behind a FaultyJobStore
// whose faults() stay disarmed until a test arms them.
class CoordinatorFixture {
 public:
  explicit CoordinatorFixture(const std::string& name, CoordinatorOptions options = {});

  Coordinator& core() { return *core_; }
  FakeClock& clock() { return clock_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& root() const { return root_; }
  const std::string& db_path() const { return db_path_; }
  StoreFaults& faults() { return *faults_; }
  void Reopen();

  // Submits, registers a group and acquires the job on it.
  std::string Submit(const std::vector<int64_t>& batch_sizes = {8}, int64_t epochs = 2, int world_size = 2);
  std::string Register(int world_size = 2);
  v1::AcquireJobResponse Acquire(const std::string& group_id);

 private:
  std::string dir_, root_, data_dir_, db_path_;
  CoordinatorOptions options_;
  FakeClock clock_{1'000'000'000'000};
  std::shared_ptr<StoreFaults> faults_ = std::make_shared<StoreFaults>();
  std::unique_ptr<SpecValidator> validator_;
  std::unique_ptr<Coordinator> core_;
};

}  // namespace gantry::testing
