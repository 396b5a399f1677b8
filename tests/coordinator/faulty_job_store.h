// A JobStore in front of a real one that fails the calls a test names, as a full disk,
// an I/O error or a lost lock would: the coordinator's tests use it to check that a
// failed write fails the call and leaves memory and the database agreeing.
//
// Faults are shared (StoreFaults), so a test keeps a handle after the Coordinator took
// the store. "Commit" fails a transaction after its body succeeded; the real store then
// discards the body's writes, exactly as a failed COMMIT must.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/job_store.h"

namespace gantry::testing {

class StoreFaults {
 public:
  // The next call of `operation` ("PutGroup", "UpdateJob", "Commit", ...) after
  // `skip` successful ones fails with UNAVAILABLE naming the store and the operation.
  void FailNext(const std::string& operation, int skip = 0) { armed_[operation] = skip; }
  void Clear() { armed_.clear(); }
  int failures() const { return failures_; }

  absl::Status Check(const std::string& operation) {
    auto it = armed_.find(operation);
    if (it == armed_.end()) return absl::OkStatus();
    if (it->second-- > 0) return absl::OkStatus();
    armed_.erase(it);
    ++failures_;
    return absl::UnavailableError(absl::StrCat("job store: ", operation, " failed (injected disk I/O error)"));
  }

 private:
  std::map<std::string, int> armed_;
  int failures_ = 0;
};

class FaultyJobStore final : public JobStore {
 public:
  FaultyJobStore(std::unique_ptr<JobStore> inner, std::shared_ptr<StoreFaults> faults)
      : inner_(std::move(inner)), faults_(std::move(faults)) {}

  absl::Status Transaction(const std::function<absl::Status()>& body, Durability durability) override {
    return inner_->Transaction(
        [&]() -> absl::Status {
          if (absl::Status s = body(); !s.ok()) return s;
          return faults_->Check("Commit");
        },
        durability);
  }

#define GANTRY_FAULTY_CALL(name, ...)                                    \
  if (absl::Status fault = faults_->Check(#name); !fault.ok()) return fault; \
  return inner_->name(__VA_ARGS__)

  absl::StatusOr<int64_t> NextJobNumber() override { GANTRY_FAULTY_CALL(NextJobNumber); }
  absl::Status InsertJob(int64_t number, const v1::Job& job) override { GANTRY_FAULTY_CALL(InsertJob, number, job); }
  absl::Status UpdateJob(const v1::Job& job, v1::JobState expected_state) override {
    GANTRY_FAULTY_CALL(UpdateJob, job, expected_state);
  }
  absl::StatusOr<v1::Job> GetJob(const std::string& id) override { GANTRY_FAULTY_CALL(GetJob, id); }
  absl::StatusOr<JobPage> ListJobs(v1::JobState state, int64_t after, int limit) override {
    GANTRY_FAULTY_CALL(ListJobs, state, after, limit);
  }
  absl::StatusOr<JobRows> JobsInStates(const std::vector<v1::JobState>& states) override {
    GANTRY_FAULTY_CALL(JobsInStates, states);
  }
  absl::Status QuarantineJob(int64_t number, const std::string& reason) override {
    GANTRY_FAULTY_CALL(QuarantineJob, number, reason);
  }
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState() override {
    GANTRY_FAULTY_CALL(CountJobsByState);
  }
  absl::StatusOr<v1::JobEvent> AppendEvent(v1::JobEvent event) override { GANTRY_FAULTY_CALL(AppendEvent, event); }
  absl::StatusOr<std::vector<v1::JobEvent>> EventsAfter(const std::string& job_id, int64_t after, int limit) override {
    GANTRY_FAULTY_CALL(EventsAfter, job_id, after, limit);
  }
  absl::StatusOr<bool> PutEpoch(const std::string& job_id, const v1::EpochMetrics& row) override {
    GANTRY_FAULTY_CALL(PutEpoch, job_id, row);
  }
  absl::StatusOr<std::vector<v1::EpochMetrics>> Epochs(const std::string& job_id) override {
    GANTRY_FAULTY_CALL(Epochs, job_id);
  }
  absl::StatusOr<bool> AddStraggler(const std::string& job_id, const v1::StragglerEvent& event) override {
    GANTRY_FAULTY_CALL(AddStraggler, job_id, event);
  }
  absl::StatusOr<std::vector<v1::StragglerEvent>> Stragglers(const std::string& job_id) override {
    GANTRY_FAULTY_CALL(Stragglers, job_id);
  }
  absl::StatusOr<int64_t> NextGroupNumber() override { GANTRY_FAULTY_CALL(NextGroupNumber); }
  absl::Status PutGroup(int64_t number, const v1::Group& group) override { GANTRY_FAULTY_CALL(PutGroup, number, group); }
  absl::StatusOr<GroupRows> Groups() override { GANTRY_FAULTY_CALL(Groups); }

#undef GANTRY_FAULTY_CALL

 private:
  std::unique_ptr<JobStore> inner_;
  std::shared_ptr<StoreFaults> faults_;
};

}  // namespace gantry::testing
