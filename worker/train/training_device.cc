#include "worker/train/training_device.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "worker/run/shared_settings.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/tensor.h"
#if GANTRY_HAVE_CUDA
#include "common/host_name.h"
#include "worker/comm/broadcast_string.h"
#include "worker/comm/gather_strings.h"
#include "worker/comm/nccl/nccl_communicator.h"
#include "worker/tensor/cuda/cuda_device.h"
#endif

namespace gantry {
namespace {

#if GANTRY_HAVE_CUDA
// Ranks under MPI are processes with a GPU each, whose gradients NCCL all-reduces.
// Ranks running as threads of one process share its one compute stream and so its first
// GPU, and all-reduce through host memory.
bool OneProcessPerRank(const Communicator& comm) { return !comm.ranks_share_a_process(); }

// This rank's rank on its node. Collective under MPI (MPI_Comm_split_type, which waits
// without a bound), so every rank calls it first, before anything that may differ
// between ranks.
absl::StatusOr<int> LocalRank(Communicator& comm) {
  if (!OneProcessPerRank(comm)) return 0;
  return MpiLocalRank();
}

// "host PCI-bus-id" of this rank's GPU: two ranks with the same string share a GPU.
std::string GpuIdentity(int gpu) { return absl::StrCat(ThisHostName(), " ", cuda::PciBusId(gpu)); }

// Empty on every rank when no two ranks share a GPU; else, on every rank, why not.
// GPU r of a node goes to its local rank r (modulo the GPUs it sees, so a launcher that
// gives each rank its own CUDA_VISIBLE_DEVICES works too); NCCL refuses two ranks on one
// GPU, and this says so in words first.
absl::StatusOr<std::string> SharedGpuProblem(Communicator& comm, int gpu, const CommOptions& options) {
  ASSIGN_OR_RETURN(const std::vector<std::string> ids, GatherStrings(comm, GpuIdentity(gpu), 0, options));
  std::string problem;
  for (size_t i = 0; i < ids.size() && problem.empty(); ++i) {
    for (size_t j = i + 1; j < ids.size() && problem.empty(); ++j) {
      if (ids[i] != ids[j]) continue;
      problem = absl::StrCat("--device cuda: ranks ", i, " and ", j, " would share the GPU ", ids[i],
                             ": NCCL needs a GPU of its own for every rank, so start at most as many ranks on a "
                             "node as it has GPUs");
    }
  }
  RETURN_IF_ERROR(BroadcastString(comm, problem, 0, options));
  return problem;
}

absl::StatusOr<TrainingDevice> OpenGpu(Communicator& comm, const CommOptions& options, bool& out_of_step) {
  const absl::StatusOr<int> local_rank = LocalRank(comm);
  const absl::Status usable = CheckTrainingDevice("cuda");
  absl::StatusOr<int> gpu = !usable.ok() ? usable : !local_rank.ok() ? local_rank.status()
                                                                      : cuda::SelectDeviceForLocalRank(*local_rank);
  const absl::StatusOr<bool> all_have_one = AllRanksOk(comm, gpu.ok(), options);
  if (!all_have_one.ok()) {
    out_of_step = true;
    return all_have_one.status();
  }
  if (!usable.ok()) return absl::Status(usable.code(), absl::StrCat("rank ", comm.rank(), ": ", usable.message()));
  if (!gpu.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--device cuda: rank ", comm.rank(), " has no usable GPU (", gpu.status().message(),
                     "); give every rank a GPU or use --device cpu"));
  }
  if (!*all_have_one) {
    return absl::AbortedError("--device cuda: another rank has no usable GPU (see that rank's output)");
  }
  TrainingDevice d;
  d.backend = FindBackend("cuda");
  CHECK(d.backend != nullptr) << "a CUDA build without the CUDA backend";
  d.description = absl::StrCat("cuda:", *gpu, " (", cuda::DeviceName(*gpu), ")");
  d.pci_bus_id = cuda::PciBusId(*gpu);
  if (comm.size() > 1 && OneProcessPerRank(comm)) {
    const absl::StatusOr<std::string> shared = SharedGpuProblem(comm, *gpu, options);
    if (!shared.ok()) {
      out_of_step = true;
      return shared.status();
    }
    if (!shared->empty()) return absl::FailedPreconditionError(*shared);
    absl::StatusOr<std::unique_ptr<NcclCommunicator>> nccl = NcclCommunicator::Create(comm, options);
    if (!nccl.ok()) {
      out_of_step = true;
      return absl::Status(nccl.status().code(), absl::StrCat("--device cuda: joining the NCCL communicator of ",
                                                             comm.size(), " ranks: ", nccl.status().message()));
    }
    d.gradient_comm = *std::move(nccl);
  }
  return d;
}
#endif

}  // namespace

std::string DescribeRankDevice(Communicator& comm) {
#if GANTRY_HAVE_CUDA
  const absl::StatusOr<int> local_rank = LocalRank(comm);  // collective: every rank, first
  if (local_rank.ok() && CheckTrainingDevice("cuda").ok()) {
    if (absl::StatusOr<int> count = cuda::VisibleDeviceCount(); count.ok()) {
      const int gpu = *local_rank % *count;
      return absl::StrCat("cuda:", gpu, " ", cuda::DeviceName(gpu));
    }
  }
#endif
  (void)comm;
  return "cpu";
}

absl::Status CheckTrainingDevice(const std::string& device) {
  if (device == "cpu") return absl::OkStatus();
  if (device != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat("--device: bad value '", device, "' (one of cpu, cuda)"));
  }
  if (!BuiltWithCuda()) {
    return absl::InvalidArgumentError(
        "--device cuda: this gantry-worker was built without CUDA (rebuild with the CUDA toolkit and "
        "-DGANTRY_CUDA=ON); use --device cpu");
  }
#if GANTRY_HAVE_CUDA
  if (absl::Status visible = cuda::DeviceVisible(); !visible.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device cuda: no CUDA device visible (", visible.message(), "); use --device cpu"));
  }
#endif
  return absl::OkStatus();
}

absl::StatusOr<Backend*> CpuKernels(const std::string& kernels) {
  const std::string name = kernels.empty() ? std::string(DefaultBackendName()) : kernels;
  const std::vector<std::string> built = BuiltBackendNames();
  Backend* backend = std::find(built.begin(), built.end(), name) != built.end() ? FindBackend(name) : nullptr;
  if (backend != nullptr) return backend;
  return absl::InvalidArgumentError(absl::StrCat("--kernels ", name, ": this gantry-worker was built without it (",
                                                 name == "onednn" ? "install libdnnl-dev and rebuild; " : "",
                                                 "this build has ", absl::StrJoin(built, ", "), ")"));
}

absl::StatusOr<TrainingDevice> OpenTrainingDevice(const TrainConfig& config, Communicator& comm,
                                                  const CommOptions& options, bool* out_of_step) {
  bool ignored = false;
  bool& failed_collective = out_of_step != nullptr ? *out_of_step : ignored;
  failed_collective = false;
  if (config.device == "cpu") {
    TrainingDevice d;
    ASSIGN_OR_RETURN(d.backend, CpuKernels(config.kernels));
    d.description = absl::StrCat("cpu (", std::string(d.backend->name()), " kernels)");
    return d;
  }
#if GANTRY_HAVE_CUDA
  if (config.device == "cuda") return OpenGpu(comm, options, failed_collective);
#endif
  // A build without CUDA: every rank runs the same binary, so all refuse alike.
  const absl::Status unusable = CheckTrainingDevice(config.device);
  CHECK(!unusable.ok()) << "device " << config.device << " neither cpu nor refused";
  return absl::Status(unusable.code(), absl::StrCat("rank ", comm.rank(), ": ", unusable.message()));
}

}  // namespace gantry
