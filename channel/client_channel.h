// What every client of the coordinator (the `gantry` CLI, the worker pool) needs to
// reach it: the bearer token, channel credentials, keepalive, and per-call contexts.
// gRPC and Abseil only, so any client can link it without the coordinator's classes.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gantry {

// A token given as the path of a regular file is read from it (so it stays out of `ps`
// and shell history); anything else is the token. Either way it is cleaned (CleanToken,
// common/printable_text.h): surrounding whitespace such as the newline of `$(cat tok)`
// is removed, and a control character or non-ASCII byte, which gRPC would abort on, is
// refused naming `source` (the flag or variable it came from). Empty stays empty (no
// token).
absl::StatusOr<std::string> ResolveToken(const std::string& given, const std::string& source = "--token");

// Insecure credentials, or TLS when `tls` is set or a CA file is given (`tls_ca`: PEM
// roots, read here; empty: the system roots). Errors name --tls-ca.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(bool tls, const std::string& tls_ca);

// Keepalive pings, so a client notices a coordinator that vanished during a long poll
// or a long watch.
void SetClientKeepalive(grpc::ChannelArguments& args);

// A context for one call: a deadline `timeout_seconds` from now and, when `token` is not
// empty, the `authorization: Bearer` header.
std::unique_ptr<grpc::ClientContext> CallContext(double timeout_seconds, const std::string& token);

}  // namespace gantry
