// Bearer-token authentication: with --token-file, every call must carry the metadata
// `authorization: Bearer <token>`. The comparison takes the same time whatever the
// first differing byte, so the token cannot be guessed byte by byte from timings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// Equal contents; the time depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

class TokenAuth {
 public:
  static constexpr size_t kMinTokenChars = 16;

  // Reads the token: the file's contents without surrounding whitespace (CleanToken).
  // INVALID_ARGUMENT naming the file when it is unreadable, the token holds a byte that
  // is not printable ASCII (no client could send it), or it is shorter than
  // kMinTokenChars (make one with `openssl rand -hex 32`).
  static absl::StatusOr<TokenAuth> FromFile(const std::string& path);
  explicit TokenAuth(std::string token) : token_(std::move(token)) {}

  // OK when `authorization` (the metadata value, if any) is "Bearer <token>";
  // UNAUTHENTICATED otherwise, without saying which part was wrong.
  absl::Status Check(std::optional<std::string_view> authorization) const;

 private:
  std::string token_;
};

}  // namespace gantry
