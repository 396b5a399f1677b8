#include "tests/coordinator/coordinator_harness.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace gantry::testing {

std::string MakeTempDir(const std::string& name) {
  std::string templ = ::testing::TempDir() + "/gantry_" + name + "_XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << templ;
  return templ;
}

absl::StatusOr<std::unique_ptr<CoordinatorServer>> StartServerWithToken(const std::string& name,
                                                                        const std::string& token) {
  const std::string dir = MakeTempDir(name);
  std::filesystem::create_directories(dir + "/data");
  std::ofstream(dir + "/token") << token;
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = dir + "/gantry.db";
  options.data_roots = {dir + "/data"};
  options.token_file = dir + "/token";
  return CoordinatorServer::Start(options, Clock::Real(), Clock::Real());
}

v1::SubmitJobRequest SweepRequest(const std::string& data_dir, const std::vector<int64_t>& batch_sizes,
                                  int64_t epochs, int world_size) {
  v1::SubmitJobRequest request;
  v1::RunSpec* spec = request.mutable_spec();
  spec->set_dataset("mnist");
  spec->set_data_dir(data_dir);
  for (int64_t b : batch_sizes) spec->add_batch_sizes(b);
  spec->mutable_epochs()->set_value(epochs);
  spec->mutable_seed()->set_value(7);
  request.set_world_size(world_size);
  request.set_name("sweep");
  return request;
}

v1::EpochMetrics EpochRow(int64_t batch_size, int64_t epoch, int world_size) {
  v1::EpochMetrics row;
  row.set_batch_size(batch_size);
  row.set_epoch(epoch);
  row.set_steps(1000 / batch_size);
  row.set_seconds(10.0 * static_cast<double>(epoch) + 64.0 / static_cast<double>(batch_size));
  row.set_steady_step_ms(8.0 * static_cast<double>(batch_size) / 64.0 + 0.25 * static_cast<double>(epoch));
  row.set_samples_per_s(static_cast<double>(batch_size) / row.steady_step_ms() * 1000.0);
  row.set_d_loss(1.25 - 0.01 * static_cast<double>(epoch));
  row.set_g_loss(0.75 + 0.02 * static_cast<double>(epoch));
  row.set_step_p50_ms(row.steady_step_ms() * 0.98);
  row.set_step_p99_ms(row.steady_step_ms() * 1.5);
  row.set_data_wait_ms(0.125);
  row.set_world_size(world_size);
  row.set_allreduce_ms(1.5);
  row.set_allreduce_share(1.5 / row.steady_step_ms());
  row.set_straggler_flags(epoch - 1);
  return row;
}

v1::EpochMetrics ScoredEpochRow(int64_t batch_size, int64_t epoch, int world_size) {
  v1::EpochMetrics row = EpochRow(batch_size, epoch, world_size);
  row.set_quality_fd(12.5);
  row.set_quality_class_entropy(0.375);
  row.set_quality_marginal_entropy(2.25);
  row.set_quality_confidence(0.875);
  row.set_energy_j(250);
  row.set_energy_j_per_sample(0.25);
  return row;
}

v1::ReportProgressRequest Report(const std::string& group, const v1::AcquireJobResponse& acquired) {
  v1::ReportProgressRequest request;
  request.set_group_id(group);
  request.set_job_id(acquired.job().id());
  request.set_attempt(acquired.job().attempts());
  return request;
}

CoordinatorFixture::CoordinatorFixture(const std::string& name, CoordinatorOptions options) : options_(options) {
  dir_ = MakeTempDir(name);
  root_ = dir_ + "/root";
  data_dir_ = root_ + "/mnist";
  std::filesystem::create_directories(data_dir_);
  db_path_ = dir_ + "/gantry.db";
  Reopen();
}

void CoordinatorFixture::Reopen() {
  core_.reset();
  absl::StatusOr<DataRoots> roots = DataRoots::Create({root_});
  EXPECT_TRUE(roots.ok()) << roots.status();
  validator_ = std::make_unique<SpecValidator>(*roots);
  absl::StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(db_path_);
  EXPECT_TRUE(store.ok()) << store.status();
  faults_->Clear();
  core_ = std::make_unique<Coordinator>(std::make_unique<FaultyJobStore>(std::move(*store), faults_), *validator_,
                                        options_, clock_, clock_);
  absl::Status recovered = core_->Recover();
  EXPECT_TRUE(recovered.ok()) << recovered;
}

std::string CoordinatorFixture::Submit(const std::vector<int64_t>& batch_sizes, int64_t epochs, int world_size) {
  absl::StatusOr<v1::Job> job = core_->SubmitJob(SweepRequest(data_dir_, batch_sizes, epochs, world_size));
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? job->id() : "";
}

std::string CoordinatorFixture::Register(int world_size) {
  v1::RegisterGroupRequest request;
  request.set_world_size(world_size);
  for (int r = 0; r < world_size; ++r) request.add_hosts("localhost");
  absl::StatusOr<v1::RegisterGroupResponse> response = core_->RegisterGroup(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->group_id() : "";
}

v1::AcquireJobResponse CoordinatorFixture::Acquire(const std::string& group_id) {
  v1::AcquireJobRequest request;
  request.set_group_id(group_id);
  absl::StatusOr<v1::AcquireJobResponse> response = core_->AcquireJob(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : v1::AcquireJobResponse();
}

}  // namespace gantry::testing
