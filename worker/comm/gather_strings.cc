#include "worker/comm/gather_strings.h"

#include <array>
#include <cstring>

#include "common/status_macros.h"

namespace gantry {
namespace {

constexpr size_t kEntryBytes = 128;  // fixed-size entries: one Gather, no lengths first

}  // namespace

absl::StatusOr<std::vector<std::string>> GatherStrings(Communicator& comm, const std::string& mine, int root,
                                                       const CommOptions& options) {
  std::array<char, kEntryBytes> entry{};
  std::strncpy(entry.data(), mine.c_str(), entry.size() - 1);
  const bool here = comm.rank() == root;
  std::vector<char> all(here ? kEntryBytes * static_cast<size_t>(comm.size()) : 0);
  RETURN_IF_ERROR(comm.Gather(entry.data(), kEntryBytes, here ? all.data() : nullptr, root, options));
  std::vector<std::string> out;
  for (int r = 0; here && r < comm.size(); ++r) {
    const char* at = all.data() + static_cast<size_t>(r) * kEntryBytes;
    out.emplace_back(at, strnlen(at, kEntryBytes - 1));
  }
  return out;
}

}  // namespace gantry
