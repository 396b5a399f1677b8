#include "coordinator/service/rpc_metrics.h"

#include <grpcpp/support/status.h>
#include <google/protobuf/descriptor.h>

#include <atomic>
#include <tuple>

#include "gantry/v1/coordinator.pb.h"

namespace gantry {
namespace {

constexpr const char* kCodeNames[] = {"OK",
                                      "CANCELLED",
                                      "UNKNOWN",
                                      "INVALID_ARGUMENT",
                                      "DEADLINE_EXCEEDED",
                                      "NOT_FOUND",
                                      "ALREADY_EXISTS",
                                      "PERMISSION_DENIED",
                                      "RESOURCE_EXHAUSTED",
                                      "FAILED_PRECONDITION",
                                      "ABORTED",
                                      "OUT_OF_RANGE",
                                      "UNIMPLEMENTED",
                                      "INTERNAL",
                                      "UNAVAILABLE",
                                      "DATA_LOSS",
                                      "UNAUTHENTICATED"};

// Times one call: created when it arrives, records once, at its status (or, for a call
// that ends without one, when gRPC destroys it, as CANCELLED).
// gRPC may construct, intercept and destroy it on different threads, handing it over
// inside its own (uninstrumented) code; `recorded_` is atomic so that the once-only check
// is itself the synchronisation: the constructor's release store publishes the members,
// and whichever thread records first claims the call with an exchange.
class TimingInterceptor final : public grpc::experimental::Interceptor {
 public:
  TimingInterceptor(RpcMetrics& metrics, const Clock& clock, std::string method)
      : metrics_(metrics), clock_(clock), method_(std::move(method)), start_(clock.NowNanos()) {
    recorded_.store(false, std::memory_order_release);
  }
  ~TimingInterceptor() override { Finish(grpc::StatusCode::CANCELLED); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      Finish(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  // Records the call with `code` unless it was recorded already.
  void Finish(int code) {
    if (recorded_.exchange(true, std::memory_order_acq_rel)) return;
    metrics_.Record(method_, code, static_cast<double>(clock_.NowNanos() - start_) * 1e-9);
  }

  RpcMetrics& metrics_;
  const Clock& clock_;
  const std::string method_;
  const int64_t start_;
  std::atomic<bool> recorded_{false};
};

}  // namespace

RpcMetrics::RpcMetrics() {
  const google::protobuf::DescriptorPool* pool = google::protobuf::DescriptorPool::generated_pool();
  if (const auto* service = pool->FindServiceByName("gantry.v1.Coordinator"); service != nullptr) {
    for (int i = 0; i < service->method_count(); ++i) {
      known_.insert("/" + service->full_name() + "/" + service->method(i)->name());
    }
  }
  // The standard health service is registered by gRPC itself (no generated code here).
  known_.insert("/grpc.health.v1.Health/Check");
  known_.insert("/grpc.health.v1.Health/Watch");
}

std::string RpcMetrics::CodeName(int code) {
  if (code >= 0 && code < static_cast<int>(std::size(kCodeNames))) return kCodeNames[code];
  return "UNKNOWN";
}

std::pair<std::string, std::string> RpcMetrics::Label(const std::string& full_method) const {
  if (known_.count(full_method) == 0) return {"other", "other"};
  const size_t slash = full_method.rfind('/');
  return {full_method.substr(1, slash - 1), full_method.substr(slash + 1)};
}

void RpcMetrics::Record(const std::string& full_method, int code, double seconds) {
  auto [service, method] = Label(full_method);
  absl::MutexLock lock(&mu_);
  ++counts_[{service, method, CodeName(code)}];
  Latency& latency = latencies_[{service, method}];
  ++latency.count;
  latency.sum += seconds;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++latency.buckets[i];
      break;
    }
  }
}

void RpcMetrics::Write(PrometheusText& out) const {
  absl::MutexLock lock(&mu_);
  out.Family("gantry_rpc_requests_total", PrometheusText::Type::kCounter,
             "gRPC calls the coordinator answered, by method and status code.");
  for (const auto& [key, count] : counts_) {
    const auto& [service, method, code] = key;
    out.Sample({{"service", service}, {"method", method}, {"code", code}}, static_cast<double>(count));
  }
  out.Family("gantry_rpc_duration_seconds", PrometheusText::Type::kHistogram,
             "Time from a gRPC call's arrival to its status (a WatchJob stream: the whole watch).");
  const std::vector<double> bounds(kBuckets.begin(), kBuckets.end());
  for (const auto& [key, latency] : latencies_) {
    std::vector<uint64_t> cumulative(kBuckets.size());
    uint64_t running = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) cumulative[i] = running += latency.buckets[i];
    out.Histogram({{"service", key.first}, {"method", key.second}}, bounds, cumulative, latency.sum, latency.count);
  }
}

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new TimingInterceptor(metrics_, clock_, info->method() == nullptr ? "" : info->method());
}

}  // namespace gantry
