#include "worker/pool/metrics_proto.h"

namespace gantry {

v1::StragglerEvent ToStragglerEvent(const StragglerEvent& e, int64_t batch_size, int64_t epoch) {
  v1::StragglerEvent m;
  m.set_batch_size(batch_size);
  m.set_epoch(epoch);
  m.set_step(e.step);
  m.set_rank(e.rank);
  m.set_window_steps(e.window_steps);
  m.set_rank_compute_ms(e.rank_compute_ms);
  m.set_median_compute_ms(e.median_compute_ms);
  m.set_ratio(e.ratio);
  return m;
}

v1::Progress ToProgress(const StepProgress& p) {
  v1::Progress m;
  m.set_batch_size(p.batch_size);
  m.set_epoch(p.epoch);
  m.set_step(p.step);
  m.set_steps_per_epoch(p.steps_in_epoch);
  m.set_global_step(p.global_step);
  m.set_samples_per_s(p.samples_per_s);
  m.set_d_loss(p.d_loss);
  m.set_g_loss(p.g_loss);
  return m;
}

std::vector<v1::RankTiming> ToRankTimings(const std::vector<RankWindow>& windows) {
  std::vector<v1::RankTiming> timings;
  for (const RankWindow& w : windows) {
    v1::RankTiming& t = timings.emplace_back();
    t.set_rank(w.rank);
    t.set_share(w.share);
    t.set_window_steps(w.window_steps);
    t.set_compute_ms(w.median.compute_s * 1e3);
    t.set_data_wait_ms(w.median.data_wait_s * 1e3);
    t.set_allreduce_ms(w.median.allreduce_wait_s * 1e3);
  }
  return timings;
}

}  // namespace gantry
