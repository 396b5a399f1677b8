#include "channel/client_channel.h"

#include <chrono>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/pem_text.h"
#include "common/printable_text.h"

namespace gantry {
namespace {

// Larger than any token or CA bundle: a bigger file is the wrong one, and is not read.
constexpr size_t kMaxCredentialFileBytes = 1 << 20;

absl::StatusOr<std::string> ReadText(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxCredentialFileBytes);
  if (!bytes.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", bytes.status().message()));
  return std::string(bytes->begin(), bytes->end());
}

}  // namespace

absl::StatusOr<std::string> ResolveToken(const std::string& given, const std::string& source) {
  if (given.empty()) return given;
  std::error_code error;
  if (!std::filesystem::is_regular_file(given, error)) return CleanToken(given, source);
  absl::StatusOr<std::string> text = ReadText(source, given);
  if (!text.ok()) return text.status();
  return CleanToken(*text, absl::StrCat(source, " file ", given));
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(bool tls, const std::string& tls_ca) {
  if (!tls && tls_ca.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!tls_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadText("--tls-ca", tls_ca);
    if (!ca.ok()) return ca.status();
    if (absl::Status pem = CheckPemText(*ca, PemContent::kCertificates, "--tls-ca " + tls_ca); !pem.ok()) return pem;
    ssl.pem_root_certs = *ca;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (credentials == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-ca ", tls_ca.empty() ? "(the system's CAs)" : tls_ca, ": gRPC cannot use it"));
  }
  return credentials;
}

void SetClientKeepalive(grpc::ChannelArguments& args) {
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
}

std::unique_ptr<grpc::ClientContext> CallContext(double timeout_seconds, const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  return context;
}

}  // namespace gantry
