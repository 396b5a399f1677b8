#include "worker/serve/metrics_proto.h"

namespace gantry {

v1::EpochMetrics ToEpochMetrics(const EpochRow& r) {
  v1::EpochMetrics m;
  m.set_batch_size(r.batch_size);
  m.set_epoch(r.epoch);
  m.set_seconds(r.seconds);
  m.set_steady_step_ms(r.steady_step_ms);
  m.set_samples_per_s(r.samples_per_s);
  m.set_d_loss(r.d_loss);
  m.set_g_loss(r.g_loss);
  m.set_steps(r.steps);
  m.set_step_p50_ms(r.step_p50_ms);
  m.set_step_p99_ms(r.step_p99_ms);
  m.set_data_wait_ms(r.data_wait_ms);
  m.set_world_size(r.world_size);
  m.set_allreduce_ms(r.allreduce_ms);
  m.set_allreduce_share(r.allreduce_share);
  m.set_straggler_flags(r.straggler_flags);
  m.set_loss_scale_g(r.loss_scale_g);
  m.set_loss_scale_d(r.loss_scale_d);
  m.set_skipped_steps_g(r.skipped_steps_g);
  m.set_skipped_steps_d(r.skipped_steps_d);
  m.set_peak_rss_mb(r.peak_rss_mb);
  return m;
}

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
