#include "cli/watch_command.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/output.h"
#include "cli/report_format.h"
#include "cli/request_text.h"
#include "cli/seconds_flag.h"
#include "cli/rpc_exit_codes.h"
#include "report/epoch_row_proto.h"
#include "report/epoch_table.h"
#include "report/state_names.h"

namespace gantry::cli {
namespace {

class EventPrinter {
 public:
  explicit EventPrinter(bool json) : json_(json) {}

  void Print(const v1::JobEvent& event) {
    if (json_) {
      std::printf("%s\n", ToJson(event).c_str());
    } else if (event.has_state()) {
      const v1::StateChange& s = event.state();
      std::printf("[%s] %s %s: %s\n", FormatTime(event.unix_ms()).c_str(), Shown(event.job_id()).c_str(),
                  JobStateName(s.state()).c_str(), Shown(s.message()).c_str());
    } else if (event.has_epoch()) {
      // The worker's own end-of-run table, its header once.
      const std::vector<std::string> lines =
          absl::StrSplit(FormatEpochTable({FromEpochMetrics(event.epoch())}), '\n', absl::SkipEmpty());
      if (!header_printed_) std::printf("%s\n", lines.front().c_str());
      header_printed_ = true;
      std::printf("%s\n", lines.back().c_str());
    } else if (event.has_straggler()) {
      const v1::StragglerEvent& e = event.straggler();
      absl::PrintF("straggler: rank %d at step %d (batch %d, epoch %d): %.1f ms/step, %.2fx the median %.1f ms\n",
                  e.rank(), e.step(), e.batch_size(), e.epoch(), e.rank_compute_ms(), e.ratio(), e.median_compute_ms());
    } else if (event.has_progress() && event.progress().batch_size() == 0) {  // a rollout's
      const v1::Progress& p = event.progress();
      absl::PrintF("  step %d/%d: %.1f tiles/s\n", p.step(), p.steps_per_epoch(), p.samples_per_s());
    } else if (event.has_progress()) {
      const v1::Progress& p = event.progress();
      absl::PrintF("  batch %d epoch %d step %d/%d: %.1f samples/s, d_loss %.4f g_loss %.4f\n", p.batch_size(),
                  p.epoch(), p.step(), p.steps_per_epoch(), p.samples_per_s(), p.d_loss(), p.g_loss());
    }
    std::fflush(stdout);
  }

 private:
  bool json_;
  bool header_printed_ = false;
};

int ExitCodeForEnd(v1::JobState state) {
  if (state == v1::JOB_STATE_FAILED) return kExitJobFailed;
  if (state == v1::JOB_STATE_CANCELLED) return kExitJobCancelled;
  return kExitOk;
}

}  // namespace

WatchCommand::WatchCommand(CLI::App& app)
    : Command(app, "watch", "follow a job: its history, live progress and epoch rows, to the end") {
  command_->add_option("id", args_.job_id, "job id")->required();
  command_->add_option("--for", args_.timeout_seconds, "give up after this many seconds (at most a year)")
      ->default_val(86400)
      ->check(SecondsIn(kMinWatchSeconds, kMaxWatchSeconds));
  command_->add_option("--reconnect", args_.reconnect_seconds, "retry an unreachable coordinator this long")
      ->default_val(60)
      ->check(SecondsIn(0, kMaxReconnectSeconds));
}

int Watch(Connection& client, const WatchArgs& args) {
  v1::WatchJobRequest first;
  first.set_job_id(args.job_id);
  if (absl::Status text = CheckRequestText(first); !text.ok()) return Fail(text, client.flags().json);
  const absl::Time deadline = absl::Now() + absl::Seconds(args.timeout_seconds);
  EventPrinter printer(client.flags().json);
  int64_t after = 0;
  v1::JobState last_state = v1::JOB_STATE_UNSPECIFIED;
  absl::Time unreachable_since = absl::InfiniteFuture();
  double backoff_s = 0.25;
  while (true) {
    const double left = absl::ToDoubleSeconds(deadline - absl::Now());
    if (left <= 0) {
      return FailCall(client, grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                           absl::StrFormat("watch: gave up after --for %g s", args.timeout_seconds)));
    }
    std::unique_ptr<grpc::ClientContext> context = client.Context(left);
    v1::WatchJobRequest request;
    request.set_job_id(args.job_id);
    request.set_after_sequence(after);
    std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader = client.stub().WatchJob(context.get(), request);
    v1::JobEvent event;
    while (reader->Read(&event)) {
      unreachable_since = absl::InfiniteFuture();
      backoff_s = 0.25;
      printer.Print(event);
      if (!event.has_progress()) after = event.sequence();
      if (event.has_state()) last_state = event.state().state();
    }
    const grpc::Status status = reader->Finish();
    if (status.ok()) return ExitCodeForEnd(last_state);
    // The stream's only deadline is the rest of --for.
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return FailCall(client, grpc::Status(status.error_code(),
                                           absl::StrFormat("watch: gave up after --for %g s; %s has not ended",
                                                           args.timeout_seconds, args.job_id)));
    }
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return FailCall(client, status);
    unreachable_since = std::min(unreachable_since, absl::Now());
    if (absl::Now() - unreachable_since > absl::Seconds(args.reconnect_seconds)) return FailCall(client, status);
    if (!client.flags().json) std::fprintf(stderr, "gantry: coordinator unavailable; retrying\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(backoff_s * 1000)));
    backoff_s = std::min(backoff_s * 2, 1.0);
  }
}

}  // namespace gantry::cli
