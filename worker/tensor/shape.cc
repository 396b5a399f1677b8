#include "worker/tensor/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::string Shape::ToString() const { return absl::StrCat("[", absl::StrJoin(dims_, ","), "]"); }

}  // namespace gantry
