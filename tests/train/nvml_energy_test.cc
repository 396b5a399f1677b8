// The NVML energy path against a fake libnvidia-ml (tests/train/fake_nvml), loaded the
// way the real one is (dlopen at run time): counter readings to joules, the refusals
// that make the trainer fall back to RAPL or the estimate, and a training run whose
// epochs.csv takes its energy from the GPU counter, then falls back when it fails.
#include "worker/monitor/nvml_energy.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/energy_source.h"
#include "tests/testing/training_fixtures.h"
#include "worker/comm/local_communicator.h"
#include "worker/tensor/backend.h"
#include "worker/train/trainer.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

constexpr char kBusId[] = "0000:3B:00.0";  // the fake's GPU

// Sets an environment variable for one test's scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(NvmlEnergyCounter, ACounterDeltaIsJoules) {
  ScopedEnv energy("FAKE_NVML_ENERGY", "5000000:1250");  // 5 kJ so far, then 1.25 J per read
  absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(kBusId, FAKE_NVML_LIBRARY);
  ASSERT_TRUE(counter.ok()) << counter.status();
  EXPECT_EQ(counter->Describe(), "NVML GPU 0000:3B:00.0");
  // Open read the counter once (read 0); these are reads 1 and 2.
  absl::StatusOr<uint64_t> before = counter->ReadMillijoules();
  absl::StatusOr<uint64_t> after = counter->ReadMillijoules();
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*before, 5'001'250u);
  EXPECT_EQ(*after, 5'002'500u);
  EXPECT_EQ(NvmlEnergyCounter::JoulesBetween(*before, *after), 1.25);
  EXPECT_EQ(NvmlEnergyCounter::JoulesBetween(*after, *before), std::nullopt);  // went down: driver reloaded
}

TEST(NvmlEnergyCounter, AMissingLibraryIsRefusedWithTheReason) {
  absl::StatusOr<NvmlEnergyCounter> counter =
      NvmlEnergyCounter::Open(kBusId, ::testing::TempDir() + "/no_such_dir/libnvidia-ml.so.1");
  ASSERT_EQ(counter.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(counter.status().message(), HasSubstr("cannot load "));
  EXPECT_THAT(counter.status().message(), HasSubstr("no_such_dir/libnvidia-ml.so.1"));
  EXPECT_THAT(counter.status().message(), HasSubstr("GANTRY_NVML_LIBRARY"));
}

TEST(NvmlEnergyCounter, ALibraryThatIsNotNvmlIsRefusedNamingTheFunction) {
  // zlib: a real shared library, loaded by this test binary already, without NVML in it.
  absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(kBusId, "libz.so.1");
  ASSERT_EQ(counter.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(counter.status().message(), HasSubstr("libz.so.1 has no nvmlInit_v2"));
}

TEST(NvmlEnergyCounter, NvmlErrorsAreRefusedInNvmlsWords) {
  {
    ScopedEnv init_fails("FAKE_NVML_INIT_ERROR", "1");
    absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(kBusId, FAKE_NVML_LIBRARY);
    ASSERT_EQ(counter.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(counter.status().message(), HasSubstr("nvmlInit_v2: Driver Not Loaded (NVML error 9)"));
  }
  absl::StatusOr<NvmlEnergyCounter> elsewhere = NvmlEnergyCounter::Open("0000:AF:00.0", FAKE_NVML_LIBRARY);
  ASSERT_EQ(elsewhere.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(elsewhere.status().message(),
              HasSubstr("nvmlDeviceGetHandleByPciBusId_v2: Not Found (NVML error 6) for the GPU at 0000:AF:00.0"));
  {
    // A GPU without the counter (older than Volta) is refused when opened.
    ScopedEnv unsupported("FAKE_NVML_ENERGY_FAILS_AT", "0");
    absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(kBusId, FAKE_NVML_LIBRARY);
    ASSERT_EQ(counter.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(counter.status().message(), HasSubstr("nvmlDeviceGetTotalEnergyConsumption: Not Supported"));
  }
  // One that fails later says so on the read.
  ScopedEnv later("FAKE_NVML_ENERGY_FAILS_AT", "2");
  absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(kBusId, FAKE_NVML_LIBRARY);
  ASSERT_TRUE(counter.ok()) << counter.status();
  EXPECT_TRUE(counter->ReadMillijoules().ok());
  EXPECT_EQ(counter->ReadMillijoules().status().code(), absl::StatusCode::kUnavailable);
}

TEST(NvmlEnergyCounter, TheLibraryComesFromGantryNvmlLibrary) {
  {
    ScopedEnv unset("GANTRY_NVML_LIBRARY", "");
    EXPECT_EQ(NvmlLibraryPath(), "libnvidia-ml.so.1");
  }
  ScopedEnv fake("GANTRY_NVML_LIBRARY", FAKE_NVML_LIBRARY);
  EXPECT_EQ(NvmlLibraryPath(), FAKE_NVML_LIBRARY);
  EXPECT_TRUE(NvmlEnergyCounter::Open(kBusId).ok());
}

// energy_j and energy_source of every row of the run's epochs.csv.
std::vector<std::pair<double, int>> EnergyColumns(const std::string& csv_path) {
  std::ifstream in(csv_path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = absl::StrSplit(line, ',');
  const auto at = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::vector<std::pair<double, int>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, ',');
    rows.emplace_back(std::stod(fields.at(at("energy_j"))), std::stoi(fields.at(at("energy_source"))));
  }
  return rows;
}

// A one-rank run (24 images in batches of 4: 2 epochs of 6 steps) with the fake GPU's
// counter; `fails_at`: the counter read from which the fake fails (-1: never).
std::vector<std::pair<double, int>> TrainWithGpuCounter(const std::string& name, int fails_at) {
  ScopedEnv energy("FAKE_NVML_ENERGY", "1000:3500");  // 3.5 J between two reads
  ScopedEnv fails("FAKE_NVML_ENERGY_FAILS_AT", std::to_string(fails_at));
  const TrainConfig c = testing::QuickRunConfig(testing::FreshTestDir(name) + "/run");
  const ImageDataset data = testing::TinyImages(24);
  std::unique_ptr<Communicator> comm = LocalGroup(1).Rank(0);
  absl::StatusOr<RunFolder> folder = RunFolder::Create(c.out);
  EXPECT_TRUE(folder.ok()) << folder.status();
  if (!folder.ok()) return {};
  EXPECT_TRUE(folder->WriteRunJson("{}").ok());
  absl::StatusOr<NvmlEnergyCounter> counter = NvmlEnergyCounter::Open(kBusId, FAKE_NVML_LIBRARY);  // read 0
  EXPECT_TRUE(counter.ok()) << counter.status();
  if (!counter.ok()) return {};
  Trainer trainer(c, data, &*folder, *comm, Clock::Real(), CpuBackend());
  trainer.set_gpu_energy(&*counter);
  absl::StatusOr<std::vector<EpochRow>> rows = trainer.Run();
  EXPECT_TRUE(rows.ok()) << rows.status();
  return EnergyColumns(c.out + "/epochs.csv");
}

TEST(TrainerGpuEnergy, EpochsTakeTheirEnergyFromTheGpuCounter) {
  // Each epoch reads the counter at its start and its end: reads 1-2, then 3-4.
  const std::vector<std::pair<double, int>> rows = TrainWithGpuCounter("gpu-energy", -1);
  const int nvml = static_cast<int>(EnergySource::kNvml);
  EXPECT_EQ(rows, (std::vector<std::pair<double, int>>{{3.5, nvml}, {3.5, nvml}}));
}

TEST(TrainerGpuEnergy, AnEpochWhoseCounterFailsFallsBackToRaplOrTheEstimate) {
  const std::vector<std::pair<double, int>> rows = TrainWithGpuCounter("gpu-energy-fails", 3);  // epoch 2's start
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::pair<double, int>{3.5, static_cast<int>(EnergySource::kNvml)}));
  EXPECT_THAT(rows[1].second, ::testing::AnyOf(static_cast<int>(EnergySource::kRapl),
                                               static_cast<int>(EnergySource::kEstimate)));
  EXPECT_GT(rows[1].first, 0.0);
}

}  // namespace
}  // namespace gantry
