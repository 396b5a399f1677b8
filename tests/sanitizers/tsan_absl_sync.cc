// ThreadSanitizer builds only (-DGANTRY_SANITIZER=thread): makes abseil's Mutex,
// CondVar and Notification visible to TSan.
//
// Debian's abseil is a shared library built without TSan, so its lock and unlock are
// plain atomics and futex calls that TSan never sees: every field our code guards with
// an absl::Mutex would be reported as a data race between the threads that take turns
// on it. Rebuilding abseil is not an option (we use the system's), and suppressing the
// reports would hide real races in the same fields. Instead this file interposes the
// synchronising members (an executable's definitions come before a shared library's)
// and calls the real ones through dlsym(RTLD_NEXT), adding the happens-before edges TSan
// needs: __tsan_release before a lock is given up, __tsan_acquire after it is taken.
// A Condition is evaluated with the lock held (possibly by another thread, in Unlock),
// so conditions are wrapped to acquire first as well.
//
// What this does not give: lock-order (deadlock) checking of abseil mutexes, and edges
// for code inside abseil or gRPC (uninstrumented, so TSan does not see their accesses
// either). Linked into every executable of a TSan build by the top-level CMakeLists.txt.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

#define GANTRY_STR2(x) #x
#define GANTRY_STR(x) GANTRY_STR2(x)

// The real member `suffix` (its Itanium mangling after "absl::<inline namespace>::"),
// looked up once per call site.
template <typename Fn>
Fn Real(const char* suffix, bool is_const = false) {
  const std::string ns = GANTRY_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name =
      std::string(is_const ? "_ZNK4absl" : "_ZN4absl") + std::to_string(ns.size()) + ns + suffix;
  void* f = dlsym(RTLD_NEXT, name.c_str());
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: abseil has no %s (another abseil version? update %s)\n", name.c_str(),
                 __FILE__);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

void* Addr(const absl::Mutex* mu) { return const_cast<absl::Mutex*>(mu); }

// A condition that first acquires `mu`, since whoever evaluates it holds the lock, and
// releases it after: the evaluator may be another thread (an unlocking one, after our
// Unlock already released), and what it read (often the waiter's stack, through the
// condition's captures) must happen before the waiter's own acquire when it wakes.
struct AcquiringCondition {
  const absl::Condition* cond;
  const absl::Mutex* mu;
  static bool Eval(AcquiringCondition* self) {
    __tsan_acquire(Addr(self->mu));
    const bool met = self->cond->Eval();
    __tsan_release(Addr(self->mu));
    return met;
  }
};

using Plain = void (*)(absl::Mutex*);
using Try = bool (*)(absl::Mutex*);
using CondFn = void (*)(absl::Mutex*, const absl::Condition&);
using CondTimeout = bool (*)(absl::Mutex*, const absl::Condition&, absl::Duration);
using CondDeadline = bool (*)(absl::Mutex*, const absl::Condition&, absl::Time);

}  // namespace

namespace absl {
inline namespace ABSL_OPTION_INLINE_NAMESPACE_NAME {

void Mutex::Lock() {
  static const Plain real = Real<Plain>("5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}
void Mutex::ReaderLock() {
  static const Plain real = Real<Plain>("5Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}
bool Mutex::TryLock() {
  static const Try real = Real<Try>("5Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}
bool Mutex::ReaderTryLock() {
  static const Try real = Real<Try>("5Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}
void Mutex::Unlock() {
  static const Plain real = Real<Plain>("5Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}
void Mutex::ReaderUnlock() {
  static const Plain real = Real<Plain>("5Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  static const CondFn real = Real<CondFn>("5Mutex8LockWhenERKNS0_9ConditionE");
  AcquiringCondition wrapped{&cond, this};
  real(this, Condition(&AcquiringCondition::Eval, &wrapped));
  __tsan_acquire(this);
}
bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static const CondTimeout real =
      Real<CondTimeout>("5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  AcquiringCondition wrapped{&cond, this};
  const bool met = real(this, Condition(&AcquiringCondition::Eval, &wrapped), timeout);
  __tsan_acquire(this);
  return met;
}
bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const CondDeadline real =
      Real<CondDeadline>("5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  AcquiringCondition wrapped{&cond, this};
  const bool met = real(this, Condition(&AcquiringCondition::Eval, &wrapped), deadline);
  __tsan_acquire(this);
  return met;
}

void Mutex::Await(const Condition& cond) {
  static const CondFn real = Real<CondFn>("5Mutex5AwaitERKNS0_9ConditionE");
  AcquiringCondition wrapped{&cond, this};
  __tsan_release(this);
  real(this, Condition(&AcquiringCondition::Eval, &wrapped));
  __tsan_acquire(this);
}
bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  static const CondTimeout real = Real<CondTimeout>("5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  AcquiringCondition wrapped{&cond, this};
  __tsan_release(this);
  const bool met = real(this, Condition(&AcquiringCondition::Eval, &wrapped), timeout);
  __tsan_acquire(this);
  return met;
}
bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static const CondDeadline real = Real<CondDeadline>("5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  AcquiringCondition wrapped{&cond, this};
  __tsan_release(this);
  const bool met = real(this, Condition(&AcquiringCondition::Eval, &wrapped), deadline);
  __tsan_acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  using Fn = void (*)(CondVar*, Mutex*);
  static const Fn real = Real<Fn>("7CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}
bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  using Fn = bool (*)(CondVar*, Mutex*, Duration);
  static const Fn real = Real<Fn>("7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}
bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  using Fn = bool (*)(CondVar*, Mutex*, Time);
  static const Fn real = Real<Fn>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, deadline);
  __tsan_acquire(mu);
  return timed_out;
}

void Notification::Notify() {
  using Fn = void (*)(Notification*);
  static const Fn real = Real<Fn>("12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}
void Notification::WaitForNotification() const {
  using Fn = void (*)(const Notification*);
  static const Fn real = Real<Fn>("12Notification19WaitForNotificationEv", /*is_const=*/true);
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}
bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  using Fn = bool (*)(const Notification*, Duration);
  static const Fn real =
      Real<Fn>("12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", /*is_const=*/true);
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}
bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  using Fn = bool (*)(const Notification*, Time);
  static const Fn real =
      Real<Fn>("12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", /*is_const=*/true);
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

}  // namespace ABSL_OPTION_INLINE_NAMESPACE_NAME
}  // namespace absl
