// Rank 0's reporter for one job: a thread that sends the ReportBuffer's contents with
// ReportProgress and applies the replies.
//
// It sends at once when an epoch row or the final state waits (Wake), otherwise the
// latest progress every `interval_seconds`. A report that fails for want of the
// coordinator (UNAVAILABLE, DEADLINE_EXCEEDED, ...) stays in the buffer and is sent again
// after an exponential backoff; training goes on meanwhile. Replies: `cancel` and
// `next_plan` go to the JobControl; ABORTED or NOT_FOUND mark the job gone (the
// coordinator gave it to someone else or forgot it), after which nothing more is sent;
// INVALID_ARGUMENT (a report the coordinator will never take) is logged and dropped
// rather than retried forever.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "worker/pool/backoff.h"
#include "worker/pool/coordinator_api.h"
#include "worker/pool/job_control.h"
#include "worker/pool/report_buffer.h"

namespace gantry {

struct ReportSenderOptions {
  double interval_seconds = 2;  // progress reports
  BackoffPolicy backoff;
};

class ReportSender {
 public:
  // Starts the thread. Everything must outlive the sender.
  ReportSender(CoordinatorApi& api, std::string group_id, ReportBuffer& buffer, JobControl& job,
               ReportSenderOptions options = {});
  // Stops and joins (within one call's deadline); what is still buffered is not sent.
  ~ReportSender();
  ReportSender(const ReportSender&) = delete;
  ReportSender& operator=(const ReportSender&) = delete;

  // Something urgent waits in the buffer: send now (unless backing off).
  void Wake();
  // Waits up to `timeout_seconds` until the buffer is drained or the job is gone; true
  // when drained.
  bool WaitDrained(double timeout_seconds);

 private:
  void Loop();
  // One report; false when the coordinator could not be reached.
  bool SendOnce();

  CoordinatorApi& api_;
  const std::string group_id_;
  ReportBuffer& buffer_;
  JobControl& job_;
  const ReportSenderOptions options_;
  Backoff backoff_;  // the sender thread's only

  absl::Mutex mu_;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;  // reports attempted, to wake WaitDrained
  std::thread thread_;
};

}  // namespace gantry
