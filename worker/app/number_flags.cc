#include "worker/app/number_flags.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace gantry {

void NumberFlags::Add(const std::string& flag, const std::string& help, const std::string& range,
                      std::function<absl::Status(const Flag&)> store) {
  auto f = std::make_unique<Flag>();
  f->name = flag;
  f->store = std::move(store);
  f->option = command_->add_option(flag, f->text, absl::StrCat(help, " [", range, "]"));
  flags_.push_back(std::move(f));
}

void NumberFlags::Int(const std::string& flag, int64_t* target, const IntRange& range, const std::string& help) {
  Add(flag, help, DescribeRange(range), [target, range](const Flag& f) -> absl::Status {
    absl::StatusOr<int64_t> v = ParseIntIn(f.name, f.text, range);
    if (!v.ok()) return v.status();
    *target = *v;
    return absl::OkStatus();
  });
}

void NumberFlags::Int(const std::string& flag, int* target, const IntRange& range, const std::string& help) {
  CHECK(range.lo >= std::numeric_limits<int>::min() && range.hi <= std::numeric_limits<int>::max())
      << flag << ": a range wider than int";
  Add(flag, help, DescribeRange(range), [target, range](const Flag& f) -> absl::Status {
    absl::StatusOr<int64_t> v = ParseIntIn(f.name, f.text, range);
    if (!v.ok()) return v.status();
    *target = static_cast<int>(*v);  // inside the range, so inside int
    return absl::OkStatus();
  });
}

void NumberFlags::Real(const std::string& flag, double* target, const RealRange& range, const std::string& help) {
  Add(flag, help, DescribeRange(range), [target, range](const Flag& f) -> absl::Status {
    absl::StatusOr<double> v = ParseRealIn(f.name, f.text, range);
    if (!v.ok()) return v.status();
    *target = *v;
    return absl::OkStatus();
  });
}

void NumberFlags::Seed(const std::string& flag, uint64_t* target, const std::string& help) {
  Add(flag, help, kSeedRangeText, [target](const Flag& f) -> absl::Status {
    absl::StatusOr<uint64_t> v = ParseSeed(f.name, f.text);
    if (!v.ok()) return v.status();
    *target = *v;
    return absl::OkStatus();
  });
}

absl::Status NumberFlags::Parse() const {
  for (const auto& f : flags_) {
    if (f->option->count() == 0) continue;
    if (absl::Status s = f->store(*f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gantry
