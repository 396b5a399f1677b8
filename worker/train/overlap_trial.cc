#include "worker/train/overlap_trial.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace gantry {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

bool OverlapTrial::NextStepOverlapped() const {
  if (decision_.has_value()) return *decision_;
  if (steps_ < kWarmUpSteps) return false;
  return (steps_ - kWarmUpSteps) % 2 == 1;
}

void OverlapTrial::Record(double step_seconds) {
  if (decision_.has_value()) return;
  if (steps_ >= kWarmUpSteps && steps_ < kWarmUpSteps + 2 * kTrialSteps) {
    (NextStepOverlapped() ? overlapped_ : plain_).push_back(step_seconds);
  }
  ++steps_;
}

bool OverlapTrial::ready() const { return !decision_.has_value() && steps_ >= kWarmUpSteps + 2 * kTrialSteps; }

absl::StatusOr<bool> OverlapTrial::Decide(Communicator& comm, const CommOptions& opts, std::string* summary) {
  // Sums of the ranks' medians: every rank receives the same bytes, so every rank decides alike.
  float sums[2] = {static_cast<float>(Median(plain_)), static_cast<float>(Median(overlapped_))};
  if (absl::Status s = comm.AllReduceSum(sums, 2, opts); !s.ok()) return s;
  decision_ = sums[1] <= sums[0];
  if (summary != nullptr) {
    const double n = comm.size();
    *summary = absl::StrFormat(
        "--overlap auto: %s (median step %.1f ms overlapped, %.1f ms after backward, %d steps of each, mean over %d "
        "rank(s))",
        *decision_ ? "overlapped" : "after backward", 1e3 * sums[1] / n, 1e3 * sums[0] / n, kTrialSteps, comm.size());
  }
  return *decision_;
}

}  // namespace gantry
