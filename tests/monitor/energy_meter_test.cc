#include "worker/monitor/energy_meter.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

// A fake powercap folder: zones with a name, a counter and a wrap-around range.
class FakePowercap {
 public:
  explicit FakePowercap(const std::string& name) : root_(::testing::TempDir() + "/powercap_" + name) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  const std::string& root() const { return root_; }
  void Zone(const std::string& folder, const std::string& name, uint64_t energy_uj, uint64_t max_uj) {
    fs::create_directories(root_ + "/" + folder);
    std::ofstream(root_ + "/" + folder + "/name") << name << "\n";
    SetEnergy(folder, energy_uj);
    std::ofstream(root_ + "/" + folder + "/max_energy_range_uj") << max_uj << "\n";
  }
  void SetEnergy(const std::string& folder, uint64_t energy_uj) {
    std::ofstream(root_ + "/" + folder + "/energy_uj") << energy_uj << "\n";
  }

 private:
  std::string root_;
};

TEST(RaplReader, SumsThePackageZonesAndHandlesWrapAround) {
  FakePowercap sys("wrap");
  sys.Zone("intel-rapl:0", "package-0", 999'000'000, 1'000'000'000);  // 1 J before its wrap
  sys.Zone("intel-rapl:1", "package-1", 5'000'000, 1'000'000'000);
  sys.Zone("intel-rapl:0:0", "core", 1, 1'000'000'000);  // a sub-zone, inside package-0: not counted
  sys.Zone("intel-rapl:2", "psys", 1, 1'000'000'000);    // the platform: overlaps the packages
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(sys.root());
  ASSERT_TRUE(rapl.ok()) << rapl.status();
  EXPECT_EQ(rapl->Describe(), "RAPL package-0+package-1");
  absl::StatusOr<std::vector<uint64_t>> before = rapl->Read();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, (std::vector<uint64_t>{999'000'000, 5'000'000}));
  sys.SetEnergy("intel-rapl:0", 2'000'000);   // wrapped: 1 J to the top, then 2 J
  sys.SetEnergy("intel-rapl:1", 12'500'000);  // 7.5 J
  absl::StatusOr<std::vector<uint64_t>> after = rapl->Read();
  ASSERT_TRUE(after.ok());
  EXPECT_DOUBLE_EQ(rapl->JoulesBetween(*before, *after), 3.0 + 7.5);
}

TEST(RaplReader, UnreadableCountersAreRefusedNamingTheFileAndTheFix) {
  FakePowercap sys("unreadable");
  sys.Zone("intel-rapl:0", "package-0", 1, 1000);
  // A folder where the counter should be: unreadable whoever runs the test (chmod would
  // not stop root, who runs the tests in containers).
  fs::remove(sys.root() + "/intel-rapl:0/energy_uj");
  fs::create_directories(sys.root() + "/intel-rapl:0/energy_uj");
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(sys.root());
  ASSERT_EQ(rapl.status().code(), absl::StatusCode::kPermissionDenied) << rapl.status();
  EXPECT_NE(rapl.status().message().find("intel-rapl:0/energy_uj is not readable"), std::string::npos);
  EXPECT_NE(rapl.status().message().find("run as root"), std::string::npos);
}

TEST(RaplReader, NoPowercapOrNoPackageIsNotFound) {
  EXPECT_EQ(RaplReader::Open(::testing::TempDir() + "/no_such_powercap").status().code(),
            absl::StatusCode::kNotFound);
  FakePowercap sys("psys_only");
  sys.Zone("intel-rapl:0", "psys", 1, 1000);
  EXPECT_EQ(RaplReader::Open(sys.root()).status().code(), absl::StatusCode::kNotFound);
}

TEST(EnergyMeter, MeasuresWithRaplAndEstimatesWithout) {
  FakePowercap sys("meter");
  sys.Zone("intel-rapl:0", "package-0", 100'000'000, 1'000'000'000);
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(sys.root());
  ASSERT_TRUE(rapl.ok());
  EnergyMeter measured(std::move(*rapl), 6.0);
  measured.Start();
  sys.SetEnergy("intel-rapl:0", 142'000'000);
  const EpochEnergy m = measured.Stop(/*cpu_seconds=*/1000);
  EXPECT_DOUBLE_EQ(m.joules, 42.0);
  EXPECT_FALSE(m.estimated());
  EXPECT_EQ(m.source, EnergySource::kRapl);
  EXPECT_NE(measured.Source().find("RAPL package-0"), std::string::npos);

  EnergyMeter estimate(std::nullopt, 6.0);
  estimate.Start();
  const EpochEnergy e = estimate.Stop(/*cpu_seconds=*/12.5);
  EXPECT_DOUBLE_EQ(e.joules, 75.0);
  EXPECT_TRUE(e.estimated());
  EXPECT_NE(estimate.Source().find("estimate: CPU seconds x 6 W per core"), std::string::npos);
}

TEST(EnergyMeter, FallsBackToTheEstimateWhenACounterVanishes) {
  FakePowercap sys("vanish");
  sys.Zone("intel-rapl:0", "package-0", 1, 1000);
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(sys.root());
  ASSERT_TRUE(rapl.ok());
  EnergyMeter meter(std::move(*rapl), 10.0);
  meter.Start();
  fs::remove(sys.root() + "/intel-rapl:0/energy_uj");
  const EpochEnergy e = meter.Stop(2.0);
  EXPECT_TRUE(e.estimated());
  EXPECT_DOUBLE_EQ(e.joules, 20.0);
}

TEST(EnergyMeter, CountedGpusComeFirstAndFallBackWhenARankHasNoFigure) {
  EnergyMeter meter(std::nullopt, 10.0);
  EXPECT_EQ(meter.Stop(2.0, 42.5).source, EnergySource::kEstimate);  // GPUs not counted: ignored
  meter.CountGpus("NVML GPU 0000:3B:00.0 (rank 0)");
  EXPECT_NE(meter.Source().find("NVML GPU 0000:3B:00.0 (rank 0) (GPU boards only"), std::string::npos)
      << meter.Source();
  EXPECT_NE(meter.Source().find("where a counter fails, estimate: CPU seconds x 10 W"), std::string::npos);
  meter.Start();
  const EpochEnergy gpus = meter.Stop(2.0, 42.5);
  EXPECT_EQ(gpus.source, EnergySource::kNvml);
  EXPECT_DOUBLE_EQ(gpus.joules, 42.5);
  EXPECT_FALSE(gpus.estimated());
  meter.Start();
  const EpochEnergy fallback = meter.Stop(2.0, std::nan(""));  // some rank could not read its counter
  EXPECT_EQ(fallback.source, EnergySource::kEstimate);
  EXPECT_DOUBLE_EQ(fallback.joules, 20.0);
}

TEST(EnergyMeter, ProcessCpuSecondsGrowWithWork) {
  const double before = ProcessCpuSeconds();
  volatile double x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + 1e-9 * i;
  EXPECT_GT(ProcessCpuSeconds(), before);
}

}  // namespace
}  // namespace gantry
