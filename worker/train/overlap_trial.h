// --overlap auto: which gradient exchange is faster for this run, measured on its own
// first steps. The overlapped exchange and the exchange after backward give bit-identical
// results (overlapped_exchange.h), so a trial may alternate between them freely: after
// kWarmUpSteps steps after backward (first-touch allocations, caches), the next
// 2 x kTrialSteps alternate (after backward, overlapped, ...); then every rank adds its
// median step time of each kind into one all-reduce of two numbers, at the same step on
// every rank, and all keep the kind with the smaller sum (a tie: overlapped).
//
// Why measure rather than always overlap: over a network the overlap hides the transfer,
// but on shared memory the transport's copies are compute too, and on few cores they
// take them from backward (Pix2Pix's 78 MB of gradients, 2 ranks on 2 cores: 25 % slower
// overlapped; DCGAN's 10 MB: 9 % faster; docs/scaling.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"

namespace gantry {

class OverlapTrial {
 public:
  static constexpr int64_t kWarmUpSteps = 2;
  static constexpr int64_t kTrialSteps = 6;  // of each kind

  // Whether the next step is to be overlapped.
  bool NextStepOverlapped() const;
  // This rank's time of the step just run, of the kind NextStepOverlapped said.
  void Record(double step_seconds);
  // Every trial step is recorded and nothing is decided yet: time for Decide.
  bool ready() const;
  // Collective (every rank at the same step, once ready): the faster kind for every later
  // step; true: overlapped. `summary` (may be null) says what was measured.
  absl::StatusOr<bool> Decide(Communicator& comm, const CommOptions& opts, std::string* summary);
  bool decided() const { return decision_.has_value(); }

 private:
  int64_t steps_ = 0;                   // recorded so far
  std::vector<double> plain_, overlapped_;
  std::optional<bool> decision_;
};

}  // namespace gantry
