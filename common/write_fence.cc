#include "common/write_fence.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_io.h"
#include "common/status_macros.h"

// Nothing here logs: a log line may be written to a fenced folder (the job's log.txt),
// whose sink asks HoldFenceFor under the registry's lock.
namespace gantry {
namespace {

// How long a write waits for a claim in flight to finish writing the fence file (a few
// hundred bytes and an fsync).
constexpr double kHoldWaitSeconds = 10;

std::string FencePath(const std::string& folder) { return folder + "/" + kFenceFileName; }

std::string Normal(const std::string& path) {
  std::error_code ec;
  std::string normal = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

// flock(fd, how) retried without blocking until it succeeds or `wait_seconds` pass.
bool LockWithin(int fd, int how, double wait_seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
  for (;;) {
    if (::flock(fd, how | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string ReadAll(int fd) {
  std::string text;
  char chunk[512];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, chunk, sizeof(chunk), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() > 64 * 1024) break;
    text.append(chunk, static_cast<size_t>(n));
    at += n;
  }
  return text;
}

// "epoch N" and "holder ..." lines; epoch 0 when there is none.
FenceToken ParseFence(const std::string& text) {
  FenceToken token;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "epoch ")) {
      int64_t epoch = 0;
      if (absl::SimpleAtoi(line, &epoch) && epoch > 0) token.epoch = epoch;
    } else if (absl::ConsumePrefix(&line, "holder ")) {
      token.holder = std::string(line);
    }
  }
  return token;
}

std::string FenceText(const FenceToken& token) {
  // Taken under the claim's lock, so every write under an earlier epoch ended before it.
  const int64_t unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  return absl::StrCat(
      "# gantry: the writer of the highest epoch owns this run folder; a writer of a lower one stops without writing\n",
      "epoch ", token.epoch, "\n", "holder ", token.holder, "\n", "claimed_unix_us ", unix_us, "\n");
}

// Replaces the contents of `fd` (open at offset 0: it was only read with pread) by `text`.
absl::Status WriteWhole(int fd, const std::string& path, const std::string& text) {
  if (::ftruncate(fd, 0) != 0) return FileError(path, "cannot truncate the fence file", errno);
  RETURN_IF_ERROR(WriteAll(fd, path, text.data(), text.size()));
  if (::fsync(fd) != 0) return FileError(path, "cannot sync the fence file", errno);
  return absl::OkStatus();
}

// `folder`'s fence file opened for reading and share-locked: the descriptor (the caller
// closes it), kNoFence when there is no file to open, kBusy when a claim kept it locked
// for kHoldWaitSeconds.
constexpr int kNoFence = -1, kBusy = -2;
int OpenShared(const std::string& folder) {
  const int fd = ::open(FencePath(folder).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return kNoFence;
  if (LockWithin(fd, LOCK_SH, kHoldWaitSeconds)) return fd;
  ::close(fd);
  return kBusy;
}

// The process-wide registrations, and a count read without the lock.
std::mutex registry_mutex;
std::vector<FencedFolder*>& Registry() {
  static auto* folders = new std::vector<FencedFolder*>();
  return *folders;
}
std::atomic<int> registered{0};

}  // namespace

FenceToken ReadFence(const std::string& folder) {
  const int fd = OpenShared(folder);
  if (fd < 0) return FenceToken{};
  const FenceToken token = ParseFence(ReadAll(fd));
  ::close(fd);
  return token;
}

absl::Status ClaimFence(const std::string& folder, const FenceToken& token, double wait_seconds) {
  if (token.epoch <= 0) return absl::InvalidArgumentError("a fence epoch must be positive");
  const std::string path = FencePath(folder);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) return FileError(path, "cannot open the fence file", errno);
  if (!LockWithin(fd, LOCK_EX, wait_seconds)) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat(path, ": writes of the folder's current holder did not end within ",
                                               wait_seconds, " s; try again"));
  }
  const FenceToken held = ParseFence(ReadAll(fd));
  absl::Status status;
  // The same claimant may claim again (a retry of its own); anyone else needs a higher epoch.
  const bool again = held.epoch == token.epoch && held.holder == token.holder;
  if (held.epoch >= token.epoch && !again) {
    status = absl::FailedPreconditionError(absl::StrCat(
        folder, " is held at fencing epoch ", held.epoch, " (", held.holder, "), not below this claim's ", token.epoch,
        " (", token.holder, "): a later attempt owns the folder, so this one writes nothing there"));
  } else {
    status = WriteWhole(fd, path, FenceText(token));
  }
  ::close(fd);  // releases the lock
  return status;
}

FenceHold& FenceHold::operator=(FenceHold&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FenceHold::~FenceHold() {
  if (fd_ >= 0) ::close(fd_);
}

struct FencedFolder::State {
  std::mutex mu;
  absl::Status fenced;  // the first failed check, kept
};

FencedFolder::FencedFolder(const std::string& folder, FenceToken token)
    : folder_(Normal(folder)), token_(std::move(token)), state_(std::make_unique<State>()) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  Registry().push_back(this);
  registered.fetch_add(1);
}

FencedFolder::~FencedFolder() {
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::vector<FencedFolder*>& folders = Registry();
  for (auto it = folders.begin(); it != folders.end(); ++it) {
    if (*it == this) {
      folders.erase(it);
      registered.fetch_sub(1);
      break;
    }
  }
}

absl::StatusOr<FenceHold> FencedFolder::Hold() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!state_->fenced.ok()) return state_->fenced;
  const int fd = OpenShared(folder_);
  if (fd == kNoFence) {
    // A fence that is gone (someone removed it, or the folder) fences as surely as a new
    // epoch: this writer can no longer tell that it owns the folder.
    state_->fenced = absl::AbortedError(absl::StrCat(
        folder_, ": its fence file ", kFenceFileName, " is gone, so fencing epoch ", token_.epoch, " (", token_.holder,
        ") can no longer tell that it owns the folder; it writes nothing more there"));
    return state_->fenced;
  }
  if (fd == kBusy) {
    return absl::UnavailableError(absl::StrCat(FencePath(folder_), ": a claim of the folder held the fence file for over ",
                                               kHoldWaitSeconds, " s"));
  }
  const FenceToken now = ParseFence(ReadAll(fd));
  if (now.epoch != token_.epoch) {
    ::close(fd);
    state_->fenced = absl::AbortedError(absl::StrCat(
        folder_, " now belongs to fencing epoch ", now.epoch, " (", now.holder.empty() ? "unnamed" : now.holder,
        "); epoch ", token_.epoch, " (", token_.holder, ") stops without writing another byte there"));
    return state_->fenced;
  }
  return FenceHold(fd);
}

absl::Status FencedFolder::Check() { return Hold().status(); }

absl::StatusOr<FenceHold> HoldFenceFor(const std::string& path) {
  if (registered.load() == 0) return FenceHold();
  const std::string normal = Normal(path);
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (FencedFolder* folder : Registry()) {
    const std::string& root = folder->folder();
    const bool under = normal == root || (normal.size() > root.size() && normal.compare(0, root.size(), root) == 0 &&
                                          normal[root.size()] == '/');
    if (under) return folder->Hold();
  }
  return FenceHold();
}

}  // namespace gantry
