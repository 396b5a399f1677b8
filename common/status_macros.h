// Error-propagation macros for absl::Status / absl::StatusOr.
//
// RETURN_IF_ERROR(expr): evaluates expr (a Status) and returns it from the enclosing
// function when it is not OK.
// ASSIGN_OR_RETURN(lhs, expr): evaluates expr (a StatusOr<T>); on error returns its
// status, otherwise moves the value into lhs (which may be a declaration).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GANTRY_CONCAT_INNER(a, b) a##b
#define GANTRY_CONCAT(a, b) GANTRY_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                   \
  do {                                          \
    ::absl::Status gantry_status_ = (expr);     \
    if (!gantry_status_.ok()) return gantry_status_; \
  } while (0)

#define GANTRY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(*tmp)

#define ASSIGN_OR_RETURN(lhs, expr) \
  GANTRY_ASSIGN_OR_RETURN_IMPL(GANTRY_CONCAT(gantry_statusor_, __LINE__), lhs, expr)
