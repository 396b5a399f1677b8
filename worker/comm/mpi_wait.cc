#include "worker/comm/mpi_wait.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

constexpr int64_t kSpinNanos = 20'000'000;
constexpr int64_t kMinSleepNanos = 20'000;
constexpr int64_t kMaxSleepNanos = 1'000'000;
constexpr int64_t kMaxBackgroundSleepNanos = 200'000;

}  // namespace

absl::Status MpiStatus(int code, absl::string_view what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return absl::InternalError(
      absl::StrCat(what, " failed: ", absl::string_view(text, length), " (MPI error ", code, ")"));
}

absl::StatusOr<bool> WaitUntil(MPI_Request* request, int64_t deadline_nanos, bool yield, bool background) {
  const Clock& clock = Clock::Real();
  const int64_t start = clock.NowNanos();
  int64_t sleep = 0;
  for (;;) {
    int done = 0;
    RETURN_IF_ERROR(MpiStatus(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test"));
    if (done) return true;
    const int64_t now = clock.NowNanos();
    if (now >= deadline_nanos) return false;
    const int64_t waited = now - start;
    if (waited < kSpinNanos && !background) {
      if (yield) std::this_thread::yield();
      continue;
    }
    const int64_t longest = background ? kMaxBackgroundSleepNanos : std::min(kMaxSleepNanos, waited / 16);
    sleep = std::min({std::max(2 * sleep, kMinSleepNanos), longest, deadline_nanos - now});
    std::this_thread::sleep_for(std::chrono::nanoseconds(sleep));
  }
}

bool OversubscribedByMpirun() {
  const char* value = std::getenv("OMPI_MCA_mpi_oversubscribe");
  return value != nullptr && std::string_view(value) == "1";
}

}  // namespace gantry
