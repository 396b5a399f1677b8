#include "coordinator/service/token_auth.h"

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/printable_text.h"

namespace gantry {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Walks the longer input whole; any length or byte difference sets a bit.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

absl::StatusOr<TokenAuth> TokenAuth::FromFile(const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return absl::InvalidArgumentError(absl::StrCat("--token-file: ", bytes.status().message()));
  absl::StatusOr<std::string> cleaned =
      CleanToken(absl::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                 absl::StrCat("--token-file ", path));
  if (!cleaned.ok()) return cleaned.status();
  std::string token = *std::move(cleaned);
  if (token.size() < kMinTokenChars) {
    return absl::InvalidArgumentError(absl::StrCat("--token-file ", path, ": the token has ", token.size(),
                                                   " characters, fewer than ", kMinTokenChars,
                                                   "; make one with `openssl rand -hex 32`"));
  }
  return TokenAuth(std::move(token));
}

absl::Status TokenAuth::Check(std::optional<std::string_view> authorization) const {
  constexpr std::string_view kScheme = "Bearer ";
  const std::string_view given = authorization.value_or("");
  const bool has_scheme = given.substr(0, kScheme.size()) == kScheme;
  const std::string_view token = has_scheme ? given.substr(kScheme.size()) : std::string_view();
  if (has_scheme && ConstantTimeEquals(token, token_)) return absl::OkStatus();
  return absl::UnauthenticatedError(
      "missing or wrong token: send `authorization: Bearer <token>` (gantry --token or GANTRY_TOKEN)");
}

}  // namespace gantry
