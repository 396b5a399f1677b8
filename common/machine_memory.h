// How much memory this machine (or this container) can give a process, and the one check
// every job makes against it before it allocates its big buffers: a run's model,
// optimizer state and activations, a rollout's tiles, a generate's samples, a file read
// whole. A request that cannot fit is refused by name with the fix, rather than ending in
// bad_alloc (an abort) or the kernel's OOM killer minutes later.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace gantry {

// Bytes a new allocation can get now: the smaller of /proc/meminfo's MemAvailable (else
// the free physical pages) and what the cgroup's memory.max leaves above memory.current.
// 0 when none of them can be read (then nothing is refused).
int64_t AvailableMemoryBytes();

// A check's inputs, so tests can state the machine.
struct MemoryNeed {
  std::string what;  // "--batch-size 4096 with --ngf 512" : the request, as the user wrote it
  double bytes = 0;  // the estimate
  std::string fix;   // "lower --batch-size, or use more ranks"
};

// OK when `need.bytes` fits in `available_bytes` (0: unknown, always OK); else
// INVALID_ARGUMENT (a request this machine cannot serve: exit 2) "WHAT needs about X
// GiB, more than the Y GiB this machine has available: FIX".
absl::Status CheckFitsMemory(const MemoryNeed& need, int64_t available_bytes);
// The same against AvailableMemoryBytes().
absl::Status CheckFitsMemory(const MemoryNeed& need);

}  // namespace gantry
