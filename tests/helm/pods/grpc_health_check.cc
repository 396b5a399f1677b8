// A gRPC health client, as the kubelet's `grpc` probe is one: calls
// grpc.health.v1.Health/Check on ADDRESS for SERVICE ("" asks about the whole server)
// without any credentials (the probe sends none), plaintext, and prints the answer.
//
//   grpc_health_check ADDRESS [SERVICE] [--timeout SECONDS]
//
// Exit codes, as the probe judges: 0 SERVING; 1 any other answer or a failed call
// (NOT_SERVING, NOT_FOUND for an unknown service, unreachable, deadline exceeded);
// 2 bad usage. (Debian has no grpc_health_probe; this is the test's stand-in.)
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

constexpr double kDefaultTimeoutSeconds = 1.0;  // the kubelet's default timeoutSeconds

struct Arguments {
  std::string address;
  std::string service;
  double timeout_seconds = kDefaultTimeoutSeconds;
};

int Usage(const char* why) {
  std::fprintf(stderr, "grpc_health_check: %s\nusage: grpc_health_check ADDRESS [SERVICE] [--timeout SECONDS]\n", why);
  return 2;
}

// Parses argv into `out`; returns "" or why it is bad.
const char* Parse(int argc, char** argv, Arguments* out) {
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--timeout") {
      if (i + 1 >= argc) return "--timeout needs a number of seconds";
      char* end = nullptr;
      out->timeout_seconds = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(out->timeout_seconds > 0)) return "--timeout: a positive number of seconds";
    } else if (positional == 0) {
      out->address = arg;
      ++positional;
    } else if (positional == 1) {
      out->service = arg;
      ++positional;
    } else {
      return "too many arguments";
    }
  }
  return out->address.empty() ? "give the ADDRESS (host:port)" : "";
}

const char* StatusName(HealthCheckResponse::ServingStatus status) {
  switch (status) {
    case HealthCheckResponse::SERVING: return "SERVING";
    case HealthCheckResponse::NOT_SERVING: return "NOT_SERVING";
    case HealthCheckResponse::SERVICE_UNKNOWN: return "SERVICE_UNKNOWN";
    default: return "UNKNOWN";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (const char* why = Parse(argc, argv, &args); *why != '\0') return Usage(why);
  auto channel = grpc::CreateChannel(args.address, grpc::InsecureChannelCredentials());
  std::unique_ptr<Health::Stub> stub = Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(args.timeout_seconds * 1e6)));
  HealthCheckRequest request;
  request.set_service(args.service);
  HealthCheckResponse response;
  const grpc::Status call = stub->Check(&context, request, &response);
  const std::string what = args.service.empty() ? "the server" : "service '" + args.service + "'";
  if (!call.ok()) {
    std::printf("%s %s: call failed, code %d: %s\n", args.address.c_str(), what.c_str(),
                static_cast<int>(call.error_code()), call.error_message().c_str());
    return 1;
  }
  std::printf("%s %s: %s\n", args.address.c_str(), what.c_str(), StatusName(response.status()));
  return response.status() == HealthCheckResponse::SERVING ? 0 : 1;
}
