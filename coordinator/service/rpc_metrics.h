// The coordinator's own RPC counts and latencies for /metrics: a gRPC server
// interceptor times every call from its arrival to its status (for WatchJob, a stream,
// that is the watch's length) and counts it by method and status code.
//
// Method labels are bounded: a method of gantry.v1.Coordinator or grpc.health.v1.Health
// keeps its name; anything else counts as "other", so a client cannot grow the series.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <grpcpp/support/server_interceptor.h>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/prometheus_text.h"

namespace gantry {

class RpcMetrics {
 public:
  // Upper bounds of the latency histogram, seconds (long polls last up to 30 s).
  static constexpr std::array<double, 15> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                      0.25,   0.5,   1,      2.5,   5,     10,    30};

  RpcMetrics();

  // `full_method` is gRPC's "/package.Service/Method"; `code` a grpc::StatusCode.
  void Record(const std::string& full_method, int code, double seconds);
  // gantry_rpc_requests_total{service,method,code} and
  // gantry_rpc_duration_seconds{service,method} (histogram).
  void Write(PrometheusText& out) const;

  // "OK", "NOT_FOUND", ...
  static std::string CodeName(int code);

 private:
  struct Latency {
    std::array<uint64_t, kBuckets.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  std::pair<std::string, std::string> Label(const std::string& full_method) const;

  std::set<std::string> known_;  // "/service/method" of the methods named as they are
  mutable absl::Mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> counts_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, Latency> latencies_ ABSL_GUARDED_BY(mu_);
};

// Registers with grpc::ServerBuilder::experimental().SetInterceptorCreators. `metrics`
// and `clock` must outlive the server.
class RpcMetricsInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  RpcMetricsInterceptorFactory(RpcMetrics& metrics, const Clock& clock) : metrics_(metrics), clock_(clock) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;

 private:
  RpcMetrics& metrics_;
  const Clock& clock_;
};

}  // namespace gantry
