#include "worker/pool/in_flight_calls.h"

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"

namespace gantry {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(50);
constexpr double kDeliveryMarginSeconds = 1;

std::chrono::system_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

InFlightCalls::InFlightCalls(std::function<bool()> stopping, double grace_seconds)
    : stopping_(std::move(stopping)), grace_seconds_(grace_seconds), watcher_([this] { Watch(); }) {}

InFlightCalls::~InFlightCalls() {
  {
    absl::MutexLock lock(&mu_);
    quit_ = true;
  }
  watcher_.join();
}

void InFlightCalls::OnStopLocked(TimePoint now) {
  if (!grace_end_) {
    grace_end_ = now + Seconds(grace_seconds_ + kDeliveryMarginSeconds);
    for (const auto& [context, kind] : calls_) {
      if (kind == CallKind::kWhileServing) context->TryCancel();
    }
  }
  if (!all_cancelled_ && now >= *grace_end_) {
    for (const auto& [context, kind] : calls_) context->TryCancel();
    all_cancelled_ = true;
  }
}

void InFlightCalls::Watch() {
  absl::MutexLock lock(&mu_);
  while (!quit_) {
    // `stopping_` reads a flag a signal handler sets: cheap, and safe under the lock.
    if (stopping_()) OnStopLocked(std::chrono::system_clock::now());
    mu_.AwaitWithTimeout(absl::Condition(&quit_), kPollInterval);
  }
}

bool InFlightCalls::Begin(grpc::ClientContext* context, CallKind kind) {
  absl::MutexLock lock(&mu_);
  if (stopping_()) OnStopLocked(std::chrono::system_clock::now());
  if (grace_end_) {
    if (kind == CallKind::kWhileServing || all_cancelled_) return false;
    if (context->deadline() > *grace_end_) context->set_deadline(*grace_end_);
  }
  calls_[context] = kind;
  return true;
}

void InFlightCalls::End(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  calls_.erase(context);
}

}  // namespace gantry
