#include "coordinator/jobs/lease_table.h"

namespace gantry {

void LeaseTable::Renew(const std::string& group_id, int64_t now_nanos) { deadline_[group_id] = now_nanos + lease_nanos_; }

void LeaseTable::Remove(const std::string& group_id) { deadline_.erase(group_id); }

std::vector<std::string> LeaseTable::TakeExpired(int64_t now_nanos) {
  std::vector<std::string> expired;
  for (auto it = deadline_.begin(); it != deadline_.end();) {
    if (it->second < now_nanos) {
      expired.push_back(it->first);
      it = deadline_.erase(it);
    } else {
      ++it;
    }
  }
  return expired;
}

int64_t LeaseTable::SinceRenewal(const std::string& group_id, int64_t now_nanos) const {
  auto it = deadline_.find(group_id);
  return it == deadline_.end() ? -1 : now_nanos - (it->second - lease_nanos_);
}

}  // namespace gantry
