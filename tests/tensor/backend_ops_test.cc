// The backend op suite (as ggml's test-backend-ops): every Backend op on every built host
// backend (eigen, and onednn where built), at every precision the op takes, on shapes
// with tails, strides and paddings, against references computed in double from the ops'
// definitions. The rows, references and bounds are in tests/testing/backend_ops/
// (op_table.cc lists them); tests/gpu/cuda_backend_ops_test.cc runs the same rows on the
// CUDA backend. Also rerun with oneDNN capped to AVX2 (tests/CMakeLists.txt).
#include <algorithm>
#include <bit>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "tests/testing/backend_ops/backend_interface.h"
#include "tests/testing/backend_ops/op_case.h"
#include "tests/testing/backend_ops/op_run.h"
#include "tests/testing/backend_ops/recording_backend.h"
#include "worker/tensor/backend_registry.h"

namespace gantry::testing {
namespace {

struct BackendOp {
  std::string backend;
  const OpCase* row;
};

std::vector<BackendOp> HostBackendOps() {
  std::vector<BackendOp> out;
  for (const std::string& backend : BuiltBackendNames()) {
    for (const OpCase& row : OpCases()) out.push_back({backend, &row});
  }
  return out;
}

class BackendOpsTest : public ::testing::TestWithParam<BackendOp> {};

TEST_P(BackendOpsTest, MatchesTheReference) {
  Backend* backend = FindBackend(GetParam().backend);
  ASSERT_NE(backend, nullptr) << GetParam().backend;
  RunOpCase(*backend, *GetParam().row);
}

INSTANTIATE_TEST_SUITE_P(HostBackends, BackendOpsTest, ::testing::ValuesIn(HostBackendOps()),
                         [](const ::testing::TestParamInfo<BackendOp>& info) {
                           return info.param.backend + "_" + info.param.row->name;
                         });

// Every op worker/tensor/backend.h declares has a row, and every row names a declared op:
// a new Backend virtual fails here until the table covers it. (Each row also proves, as
// it runs, that it called its op: RunOpCase.)
TEST(BackendOpsCoverage, EveryBackendOpHasARow) {
  const std::set<std::string> declared = DeclaredBackendOps(GANTRY_SOURCE_DIR "/worker/tensor/backend.h");
  std::set<std::string> covered, names;
  for (const OpCase& row : OpCases()) {
    covered.emplace(row.op);
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
  }
  for (const std::string& op : declared) {
    EXPECT_TRUE(covered.contains(op)) << "Backend::" << op << " has no row in tests/testing/backend_ops/op_table.cc";
  }
  for (const std::string& op : covered) {
    EXPECT_TRUE(declared.contains(op)) << "a row covers " << op << ", which worker/tensor/backend.h does not declare";
  }
}

// The parse behind EveryBackendOpHasARow finds virtuals declared over several lines and
// with bodies, and leaves out the destructor, the description and non-virtual functions.
TEST(BackendOpsCoverage, TheHeaderParseFindsEveryOp) {
  // Per process: the capped rerun of the whole binary may run beside this test.
  const std::string path = ::testing::TempDir() + "/backend_ops_parse_test_" + std::to_string(getpid()) + ".h";
  {
    std::ofstream header(path);
    header << "class B {\n virtual ~B() = default;\n virtual std::string_view name() const = 0;\n"
              "  virtual void Synchronize() {}\n  virtual void Gemm(MathPrecision precision,\n"
              "      bool trans_a) = 0;\n  virtual double\n  Loss(int64_t count) = 0;\n"
              "  virtual bool Check(const uint16_t* wire) { return true; }\n  void Gemm(bool t);\n};\n";
  }
  EXPECT_EQ(DeclaredBackendOps(path), (std::set<std::string>{"Gemm", "Loss", "Check"}));
  EXPECT_TRUE(DeclaredBackendOps(path + ".missing").empty());
  std::remove(path.c_str());
}

// Every host backend works in host memory and finishes each op before returning.
TEST(BackendOpsHost, HostBackendsTakeHostPointers) {
  for (const std::string& name : BuiltBackendNames()) {
    Backend* backend = FindBackend(name);
    ASSERT_NE(backend, nullptr) << name;
    EXPECT_EQ(backend->device(), Device::kCpu) << name;
    backend->Synchronize();  // a no-op that must exist
  }
}

// The reference backend with chosen ops subtly wrong: the suite must catch each fault.
class FaultyBackend : public RecordingBackend {
 public:
  FaultyBackend() : RecordingBackend(CpuBackend()) {}
  // 16-bit GEMMs on fp32 operands (never rounded): within the 16-bit bound of fp32.
  void Gemm(MathPrecision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override {
    RecordingBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  // The weight gradient overwritten instead of accumulated.
  void ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) override {
    std::fill(dw, dw + p.weight_size(), 0.0f);
    RecordingBackend::ConvBackwardWeights(p, x, dy, dw);
  }
  // Variances 1e-5 too large.
  void BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) override {
    RecordingBackend::BatchNormStats(n, c, hw, x, mean, var);
    for (int64_t ch = 0; ch < c; ++ch) var[ch] *= 1.00001f;
  }
  // bf16 by truncation instead of rounding to nearest even.
  void NarrowToBf16(int64_t count, const float* from, uint16_t* to) override {
    for (int64_t i = 0; i < count; ++i) to[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(from[i]) >> 16);
  }
  // Masks drawn with the next seed.
  void DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y) override {
    RecordingBackend::DropoutForward(count, rate, seed + (count > 1 ? 1 : 0), x, mask, y);
  }
};

// Each row fails on the fault that concerns it, naming what is wrong: the suite can fail.
TEST(BackendOpsSelfTest, CatchesAFaultyBackend) {
  FaultyBackend faulty;
  const std::pair<std::string, std::string> faults[] = {
      {"Gemm_bf16", "no trace of 16-bit operands"},
      {"ConvBackwardWeights_fp32", "dw (accumulated)"},
      {"BatchNormStats", "var"},
      {"NarrowToBf16", "bits"},
      {"DropoutForward", "mask"},
  };
  for (const auto& [row_name, message] : faults) {
    SCOPED_TRACE(row_name);
    const auto row =
        std::find_if(OpCases().begin(), OpCases().end(), [&](const OpCase& c) { return c.name == row_name; });
    ASSERT_NE(row, OpCases().end());
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter intercept(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      RunOpCase(faulty, *row);
    }
    bool named = false;
    for (int i = 0; i < failures.size(); ++i) {
      named |= std::string(failures.GetTestPartResult(i).message()).find(message) != std::string::npos;
    }
    EXPECT_GT(failures.size(), 0) << "the faulty backend passed";
    EXPECT_TRUE(named) << "no failure mentions \"" << message << "\"";
  }
}

}  // namespace
}  // namespace gantry::testing
