#include "cli/client.h"

#include <cstdlib>
#include <filesystem>
#include <grpcpp/grpcpp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"

namespace gantry::cli {
namespace {

std::string FromEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

absl::StatusOr<std::string> ReadText(const std::string& what, const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", bytes.status().message()));
  return std::string(bytes->begin(), bytes->end());
}

// A token given as a path is read from the file (so it stays out of `ps` and shell
// history); anything else is the token itself.
absl::StatusOr<std::string> ResolveToken(const std::string& given) {
  if (given.empty() || !std::filesystem::is_regular_file(given)) return given;
  absl::StatusOr<std::string> text = ReadText("--token", given);
  if (!text.ok()) return text.status();
  return std::string(absl::StripAsciiWhitespace(*text));
}

}  // namespace

absl::StatusOr<Client> Client::Connect(ClientFlags flags) {
  if (flags.coordinator.empty()) flags.coordinator = FromEnv("GANTRY_COORDINATOR");
  if (flags.coordinator.empty()) flags.coordinator = kDefaultCoordinator;
  if (flags.token.empty()) flags.token = FromEnv("GANTRY_TOKEN");
  absl::StatusOr<std::string> token = ResolveToken(flags.token);
  if (!token.ok()) return token.status();
  flags.token = *token;
  if (!(flags.timeout_seconds > 0)) return absl::InvalidArgumentError("--timeout: must be a positive number of seconds");

  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (flags.tls || !flags.tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!flags.tls_ca.empty()) {
      absl::StatusOr<std::string> ca = ReadText("--tls-ca", flags.tls_ca);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  // Notice a coordinator that went away during a long watch.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  Client client;
  client.flags_ = flags;
  client.stub_ = v1::Coordinator::NewStub(grpc::CreateCustomChannel(flags.coordinator, credentials, args));
  return client;
}

std::unique_ptr<grpc::ClientContext> Client::Context(double timeout_seconds) const {
  auto context = std::make_unique<grpc::ClientContext>();
  const double seconds = timeout_seconds > 0 ? timeout_seconds : flags_.timeout_seconds;
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  if (!flags_.token.empty()) context->AddMetadata("authorization", "Bearer " + flags_.token);
  return context;
}

}  // namespace gantry::cli
