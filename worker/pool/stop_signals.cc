#include "worker/pool/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace gantry {
namespace {

std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch a lock-free atomic");

void OnStopSignal(int signal) {
  int expected = 0;
  if (!stop_signal.compare_exchange_strong(expected, signal)) _exit(128 + signal);  // the second one
}

}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int StopSignal() { return stop_signal.load(); }

void RaiseStopForTesting(int signal) { stop_signal.store(signal); }

}  // namespace gantry
