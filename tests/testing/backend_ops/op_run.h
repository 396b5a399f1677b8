// One row of the op suite running on one backend: the backend (behind a recorder that
// notes which ops were called), the copies between the host and the backend's memory,
// and the comparison of each output with the bound the row gives it.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tests/testing/backend_ops/op_case.h"
#include "tests/testing/backend_ops/recording_backend.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/tensor.h"

namespace gantry::testing {

class OpRun {
 public:
  OpRun(Backend& backend, const OpCase& op_case) : recorder_(backend), case_(op_case) {}

  // The backend under test; every call is recorded.
  Backend& backend() { return recorder_; }
  const OpCase& op_case() const { return case_; }
  MathPrecision precision() const { return case_.precision; }
  bool on_device() const { return recorder_.device() != Device::kCpu; }
  // The ops called so far.
  const std::set<std::string, std::less<>>& called() const { return recorder_.called(); }

  // The row's shapes of kind T for this backend (CHECK-fails on a row of another kind).
  template <typename T>
  std::vector<T> shapes() const {
    std::vector<T> all = std::get<std::vector<T>>(case_.shapes);
    if (on_device()) {
      const auto& more = std::get<std::vector<T>>(case_.device_shapes);
      all.insert(all.end(), more.begin(), more.end());
    }
    return all;
  }

  // A copy of a host tensor in the backend's memory (a copy on the host too, so an op
  // that writes in place leaves `host` alone).
  Tensor Put(const Tensor& host) const { return host.ToDevice(recorder_.device()); }
  // A zero-filled tensor in the backend's memory.
  Tensor Zeros(const Shape& shape, DType dtype = DType::kF32) const {
    return Tensor::Zeros(shape, dtype, recorder_.device());
  }
  // An output buffer in the backend's memory holding NaN everywhere, for an op that must
  // overwrite it: any element it reads or leaves shows.
  Tensor Poisoned(const Shape& shape) const;
  // A host copy of a tensor in the backend's memory.
  static Tensor Get(const Tensor& t) { return t.ToDevice(Device::kCpu); }

  // The bound of `output` for this backend (a test failure, and 0, when the row has none).
  double Bound(std::string_view output) const;
  // Adds a failure naming `output` and `where` unless every element of `actual` (host) is
  // within Bound(output) x magnitude of `expected`; a bound of 0 asks for equal values.
  void Expect(std::string_view output, const Tensor& actual, const Tensor& expected, const Tensor& magnitude,
              const std::string& where) const;

 private:
  RecordingBackend recorder_;
  const OpCase& case_;
};

// Runs `op_case` on `backend` and checks that the row called the op it names.
void RunOpCase(Backend& backend, const OpCase& op_case);

}  // namespace gantry::testing
