// The gradient exchange overlapped with backward: each network's gradient buffer is cut
// into buckets (gradient_buckets.h) and each bucket's all-reduce starts, on a collective
// thread (worker/comm/collective_thread.h), as soon as backward has finished the layers it
// holds, while the rest of the step's backward still computes.
//
// Use per step: BeginStep; ComputeGradients with hooks() in its inputs (the hooks send
// what is final); SendRest for each network (what no hook sent: all of it for a model
// that does not call the hooks, or on a step that poisons its gradients first);
// Wait; then each network's sum is in SummedWire (bf16 wire) or in its grads (fp32).
//
// Every rank sends the same buckets in the same order: G's, then D's (the GAN step
// finishes G's gradients first), each network's in its plan's order, whatever moment
// each is sent at. The sum of each bucket is the transport's sum of those values, so
// the result is bit-identical to the exchange that sends the same buckets after
// backward (tested), and with one bucket per network to DataParallelStep's plain one.
//
// The gradients stay where the backend computes them: host memory with MPI or thread
// ranks, the GPU's with NCCL (whose duplicate runs each bucket on a stream of its own,
// after the kernels that produced it). The transport must reduce in the backend's memory.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "runspec/mixed_precision.h"
#include "worker/comm/collective_thread.h"
#include "worker/models/gan_model.h"
#include "worker/tensor/tensor.h"
#include "worker/train/gradient_buckets.h"

namespace gantry {

class OverlappedExchange {
 public:
  // comm: a Duplicate of the step's gradient communicator, used by the collective thread only.
  OverlappedExchange(std::unique_ptr<Communicator> comm, const CommOptions& options, GanModel& model,
                     Backend& backend, const BucketCaps& caps, WireDtype wire);

  void BeginStep();
  // What ComputeGradients reports to (GanInputs::gradients_ready).
  GanGradientHooks hooks();
  // Sends every bucket of `network` not sent yet.
  void SendRest(GanNetwork network);
  // Waits for every bucket sent; returns the first failure.
  absl::Status Wait();
  // The summed bf16 gradient of `network` after Wait (bf16 wire only).
  const uint16_t* SummedWire(GanNetwork network) const;
  // Seconds the collective thread spent all-reducing since the last call.
  double TakeAllReduceSeconds() { return thread_.TakeBusySeconds(); }

  const std::vector<GradientBucket>& buckets(GanNetwork network) const { return side(network).buckets; }

 private:
  // One network's buffers and how far this step's sending got.
  struct Side {
    FlatParameters* params = nullptr;
    std::vector<GradientBucket> buckets;
    size_t sent = 0;                  // buckets[0, sent) are on their way
    Tensor wire;                      // bf16 wire: the network's gradient as sent and summed (backend's memory)
  };
  // Adapts GradientsReadyHook to one network.
  class Hook final : public GradientsReadyHook {
   public:
    Hook(OverlappedExchange* exchange, GanNetwork network) : exchange_(exchange), network_(network) {}
    void LayersFinal(size_t first_layer) override { exchange_->SendFinal(network_, first_layer); }

   private:
    OverlappedExchange* exchange_;
    GanNetwork network_;
  };

  // Sends `network`'s buckets whose layers are all final (first_layer and above).
  void SendFinal(GanNetwork network, size_t first_layer);
  void Send(Side& s, const GradientBucket& bucket);
  Side& side(GanNetwork network) { return sides_[static_cast<size_t>(network)]; }
  const Side& side(GanNetwork network) const { return sides_[static_cast<size_t>(network)]; }

  Backend& backend_;
  const WireDtype wire_dtype_;
  CollectiveThread thread_;
  std::array<Side, 2> sides_;
  Hook g_hook_{this, GanNetwork::kGenerator};
  Hook d_hook_{this, GanNetwork::kDiscriminator};
};

}  // namespace gantry
