#include "worker/train/overlapped_exchange.h"

#include <utility>

#include "common/check.h"

namespace gantry {

OverlappedExchange::OverlappedExchange(std::unique_ptr<Communicator> comm, const CommOptions& options,
                                       GanModel& model, Backend& backend, const BucketCaps& caps, WireDtype wire)
    : backend_(backend), wire_dtype_(wire), thread_(std::move(comm), options) {
  CHECK(backend.device() == thread_.reduces()) << "the transport must reduce in the backend's memory";
  for (GanNetwork network : {GanNetwork::kGenerator, GanNetwork::kDiscriminator}) {
    Side& s = side(network);
    s.params = network == GanNetwork::kGenerator ? &model.g_params() : &model.d_params();
    s.buckets = PlanGradientBuckets(s.params->layer_param_offsets(), caps);
    if (wire_dtype_ == WireDtype::kBf16) {
      s.wire = Tensor::Uninitialized(Shape{s.params->num_params()}, DType::kBF16, backend.device());
    }
  }
}

void OverlappedExchange::BeginStep() {
  for (Side& s : sides_) s.sent = 0;
}

GanGradientHooks OverlappedExchange::hooks() { return GanGradientHooks{&g_hook_, &d_hook_}; }

void OverlappedExchange::SendFinal(GanNetwork network, size_t first_layer) {
  Side& s = side(network);
  while (s.sent < s.buckets.size() && s.buckets[s.sent].first_layer >= first_layer) Send(s, s.buckets[s.sent]);
}

void OverlappedExchange::SendRest(GanNetwork network) {
  Side& s = side(network);
  while (s.sent < s.buckets.size()) Send(s, s.buckets[s.sent]);
}

void OverlappedExchange::Send(Side& s, const GradientBucket& bucket) {
  float* grads = s.params->grads().data() + bucket.begin;
  if (wire_dtype_ == WireDtype::kBf16) {
    uint16_t* wire = s.wire.data_bf16_bits() + bucket.begin;
    backend_.ToWireBf16(bucket.size(), grads, wire);
    thread_.AllReduceSumBf16(wire, bucket.size());
  } else {
    thread_.AllReduceSum(grads, bucket.size());
  }
  ++s.sent;
}

absl::Status OverlappedExchange::Wait() { return thread_.Wait(); }

const uint16_t* OverlappedExchange::SummedWire(GanNetwork network) const {
  CHECK(wire_dtype_ == WireDtype::kBf16);
  return side(network).wire.data_bf16_bits();
}

}  // namespace gantry
