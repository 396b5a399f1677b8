// NcclCommunicator under a real mpirun (ctest: nccl_allreduce_np2, label gpu): each
// rank picks its GPU by local rank, joins the NCCL communicator over MPI, and checks
// fp32 and bf16 all-reduces of device buffers (exact sums of small integers, so every
// rank must hold exactly the expected values), then a Broadcast through the host
// communicator; then the Duplicate the overlapped gradient exchange uses, its all-reduces
// run on a CollectiveThread, each right after an asynchronous copy into its buffer on the
// compute stream (so a duplicate that did not wait for that stream's work would sum stale
// bytes), while this thread runs the parent's collectives. Exits 77 (ctest: skipped) with the reason when fewer CUDA devices are
// visible than ranks on this node: NCCL needs one GPU per rank.
#include <cstdio>
#include <vector>

#include "common/bf16.h"
#include "worker/comm/collective_thread.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/comm/mpi_environment.h"
#include "worker/comm/nccl/nccl_communicator.h"
#include "worker/tensor/cuda/cuda_device.h"
#include "worker/tensor/tensor.h"

namespace gantry {
namespace {

constexpr int kSkip = 77;

int Fail(int rank, const std::string& what) {
  std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  return 1;
}

// Rank r's bucket b holds (i % 5) + b + r: sums exact in fp32.
float BucketValue(int64_t i, int bucket, int rank) { return static_cast<float>(i % 5 + bucket + rank); }

int CheckDuplicate(NcclCommunicator& nccl, int rank, int size, const CommOptions& opts) {
  absl::StatusOr<std::unique_ptr<Communicator>> duplicate = nccl.Duplicate(opts);
  if (!duplicate.ok()) return Fail(rank, std::string(duplicate.status().message()));
  CollectiveThread thread(*std::move(duplicate), CommOptions{.timeout_seconds = opts.timeout_seconds, .background = true});
  const std::vector<int64_t> counts = {1000, 2518337, 65536};
  std::vector<Tensor> buckets;
  for (size_t b = 0; b < counts.size(); ++b) {
    std::vector<float> values(static_cast<size_t>(counts[b]));
    for (int64_t i = 0; i < counts[b]; ++i) values[i] = BucketValue(i, static_cast<int>(b), rank);
    // The copy is queued on the compute stream and may still run when the bucket is sent.
    buckets.push_back(Tensor::FromVector(Shape{counts[b]}, values).ToDevice(Device::kCuda));
    thread.AllReduceSum(buckets.back().data(), counts[b]);
    // The parent's collectives meanwhile, as the step's own go on beside the exchange.
    float one = 1;
    Tensor parent = Tensor::FromVector(Shape{1}, {one}).ToDevice(Device::kCuda);
    if (absl::Status s = nccl.AllReduceSum(parent.data(), 1, opts); !s.ok()) return Fail(rank, std::string(s.message()));
    if (parent.ToDevice(Device::kCpu).at(0) != static_cast<float>(size)) return Fail(rank, "parent sum beside the thread");
  }
  if (absl::Status s = thread.Wait(); !s.ok()) return Fail(rank, std::string(s.message()));
  for (size_t b = 0; b < counts.size(); ++b) {
    const Tensor back = buckets[b].ToDevice(Device::kCpu);
    for (int64_t i = 0; i < counts[b]; ++i) {
      float want = 0;
      for (int r = 0; r < size; ++r) want += BucketValue(i, static_cast<int>(b), r);
      if (back.at(i) != want) return Fail(rank, "duplicate's sum of bucket " + std::to_string(b) + " at " + std::to_string(i));
    }
  }
  std::printf("rank %d: the duplicate's overlapped all-reduces passed\n", rank);
  return 0;
}

int Run(int argc, char** argv) {
  gantry::PreferRingNonBlockingAllReduce();
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> mpi = MpiCommunicator::Create(&argc, &argv);
  if (!mpi.ok()) return Fail(-1, std::string(mpi.status().message()));
  const int rank = (*mpi)->rank(), size = (*mpi)->size();
  const CommOptions opts{.timeout_seconds = 30};
  // Every rank decides the skip alike: skip if any rank lacks a device of its own.
  absl::StatusOr<int> local = MpiLocalRank();
  if (!local.ok()) return Fail(rank, std::string(local.status().message()));
  int devices = 0;
  const absl::Status visible = cuda::DeviceVisible();
  std::string reason(visible.message());
  if (visible.ok()) {
    absl::StatusOr<int> device = cuda::SelectDeviceForLocalRank(*local);
    if (!device.ok()) return Fail(rank, std::string(device.status().message()));
    devices = *device == *local ? 1 : 0;  // local_rank % count wrapped: two ranks share a GPU
    if (devices == 0) reason = "fewer CUDA devices than ranks on this node";
  }
  std::vector<int> all(static_cast<size_t>(size));
  if (absl::Status s = (*mpi)->Gather(&devices, sizeof(int), all.data(), 0, opts); !s.ok()) {
    return Fail(rank, std::string(s.message()));
  }
  int skip = 0;
  if (rank == 0) for (int d : all) skip |= d == 0;
  if (absl::Status s = (*mpi)->Broadcast(&skip, sizeof(int), 0, opts); !s.ok()) {
    return Fail(rank, std::string(s.message()));
  }
  if (skip) {
    if (rank == 0) std::printf("SKIPPED: no CUDA device visible for every rank: %s\n", reason.c_str());
    return kSkip;
  }

  absl::StatusOr<std::unique_ptr<NcclCommunicator>> nccl = NcclCommunicator::Create(**mpi, opts);
  if (!nccl.ok()) return Fail(rank, std::string(nccl.status().message()));
  for (int64_t count : {int64_t{1}, int64_t{1000}, int64_t{2518337}}) {
    // Rank r contributes (i % 7) + r: the sum over ranks is exact in fp32 and bf16.
    std::vector<float> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(i % 7 + rank);
    Tensor data = Tensor::FromVector(Shape{count}, values).ToDevice(Device::kCuda);
    if (absl::Status s = (*nccl)->AllReduceSum(data.data(), count, opts); !s.ok()) {
      return Fail(rank, std::string(s.message()));
    }
    const Tensor back = data.ToDevice(Device::kCpu);
    for (int64_t i = 0; i < count; ++i) {
      const float want = static_cast<float>(size * (i % 7) + size * (size - 1) / 2);
      if (back.at(i) != want) return Fail(rank, "fp32 sum at " + std::to_string(i));
    }
    Tensor wire = Tensor::Zeros(Shape{count}, DType::kBF16);
    for (int64_t i = 0; i < count; ++i) wire.data_bf16()[i] = bf16::FromFloat(values[i]);
    Tensor wire_gpu = wire.ToDevice(Device::kCuda);
    if (absl::Status s = (*nccl)->AllReduceSumBf16(reinterpret_cast<uint16_t*>(wire_gpu.data_bf16()), count, opts);
        !s.ok()) {
      return Fail(rank, std::string(s.message()));
    }
    const Tensor wire_back = wire_gpu.ToDevice(Device::kCpu);
    for (int64_t i = 0; i < count; ++i) {
      const float want = static_cast<float>(size * (i % 7) + size * (size - 1) / 2);
      if (wire_back.data_bf16()[i].ToFloat() != want) return Fail(rank, "bf16 sum at " + std::to_string(i));
    }
  }
  if (int failed = CheckDuplicate(**nccl, rank, size, opts); failed != 0) return failed;
  int token = rank == 0 ? 12345 : 0;
  if (absl::Status s = (*nccl)->Broadcast(&token, sizeof(token), 0, opts); !s.ok() || token != 12345) {
    return Fail(rank, "broadcast through the host communicator");
  }
  nccl->reset();
  std::printf("rank %d: NCCL all-reduce checks passed\n", rank);
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) { return gantry::Run(argc, argv); }
