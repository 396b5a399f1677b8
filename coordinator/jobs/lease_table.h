// When each worker group's lease runs out. A group renews its lease with every call it
// makes (heartbeat, long poll, progress report); a group whose lease has run out is
// presumed dead, and the Coordinator takes its job back.
//
// Times are Clock::NowNanos() of the injected monotonic clock, so tests drive expiry
// with a FakeClock. Not thread-safe: the Coordinator serialises access.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gantry {

class LeaseTable {
 public:
  explicit LeaseTable(int64_t lease_nanos) : lease_nanos_(lease_nanos) {}

  // The group's lease now runs until now + the lease length.
  void Renew(const std::string& group_id, int64_t now_nanos);
  void Remove(const std::string& group_id);
  bool Holds(const std::string& group_id) const { return deadline_.count(group_id) > 0; }

  // Groups whose lease ran out before `now_nanos`, removed from the table, in id order.
  std::vector<std::string> TakeExpired(int64_t now_nanos);
  // Nanoseconds since the group last renewed; -1 when it holds no lease.
  int64_t SinceRenewal(const std::string& group_id, int64_t now_nanos) const;

  int64_t lease_nanos() const { return lease_nanos_; }

 private:
  int64_t lease_nanos_;
  std::map<std::string, int64_t> deadline_;
};

}  // namespace gantry
