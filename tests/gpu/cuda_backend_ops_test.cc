// The backend op suite (tests/tensor/backend_ops_test.cc) on the CUDA backend: every row
// of tests/testing/backend_ops/op_table.cc, on its shapes and its device shapes (the
// DCGAN's training sizes), with operands copied to the device and results back. Skipped, saying
// why, without a visible CUDA device.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "tests/testing/backend_ops/op_case.h"
#include "tests/testing/backend_ops/op_run.h"

namespace gantry::testing {
namespace {

class CudaBackendOpsTest : public ::testing::TestWithParam<const OpCase*> {};

std::vector<const OpCase*> Rows() {
  std::vector<const OpCase*> out;
  for (const OpCase& row : OpCases()) out.push_back(&row);
  return out;
}

TEST_P(CudaBackendOpsTest, MatchesTheReference) {
  GANTRY_CUDA_OR_SKIP();
  RunOpCase(Cuda(), *GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaBackendOpsTest, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<const OpCase*>& info) {
                           return "cuda_" + info.param->name;
                         });

}  // namespace
}  // namespace gantry::testing
