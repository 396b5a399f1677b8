#include "worker/train/training_device.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/train/shared_settings.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/tensor.h"
#if GANTRY_HAVE_CUDA
#include "worker/comm/nccl/nccl_communicator.h"
#include "worker/tensor/cuda/cuda_device.h"
#endif

namespace gantry {
namespace {

#if GANTRY_HAVE_CUDA
// Ranks under MPI are processes with a GPU each, whose gradients NCCL all-reduces.
// Ranks running as threads of one process share its one compute stream and so its first
// GPU, and all-reduce through host memory.
bool OneProcessPerRank(const Communicator& comm) { return comm.backend_name() == "mpi"; }

// The index of this rank's GPU (the one of its rank on the node), without selecting it.
absl::StatusOr<int> GpuOfRank(Communicator& comm) {
  int local_rank = 0;
  if (OneProcessPerRank(comm)) {
    ASSIGN_OR_RETURN(local_rank, MpiLocalRank());
  }
  ASSIGN_OR_RETURN(const int gpus, cuda::VisibleDeviceCount());
  if (local_rank >= gpus) {
    return absl::FailedPreconditionError(absl::StrCat("it is rank ", local_rank, " of its node, which has ", gpus,
                                                      " GPU(s): NCCL needs a GPU of its own for every rank, so start at "
                                                      "most ", gpus, " rank(s) per node"));
  }
  return local_rank;
}

absl::StatusOr<int> SelectGpu(Communicator& comm) {
  ASSIGN_OR_RETURN(const int gpu, GpuOfRank(comm));
  return cuda::SelectDeviceForLocalRank(gpu);
}

absl::StatusOr<TrainingDevice> OpenGpu(Communicator& comm, const CommOptions& options, bool& out_of_step) {
  const absl::Status usable = CheckTrainingDevice("cuda");
  absl::StatusOr<int> gpu = usable.ok() ? SelectGpu(comm) : usable;
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
  if (comm.size() > 1 && OneProcessPerRank(comm)) {
    absl::StatusOr<std::unique_ptr<NcclCommunicator>> nccl = NcclCommunicator::Create(comm, options);
    if (!nccl.ok()) {
      out_of_step = true;
      return absl::Status(nccl.status().code(), absl::StrCat("--device cuda: joining the NCCL communicator of ", comm.size(),
                                                 " ranks: ", nccl.status().message()));
    }
    d.gradient_comm = *std::move(nccl);
  }
  return d;
}
#endif

}  // namespace

std::string DescribeRankDevice(Communicator& comm) {
#if GANTRY_HAVE_CUDA
  if (CheckTrainingDevice("cuda").ok()) {
    if (absl::StatusOr<int> gpu = GpuOfRank(comm); gpu.ok()) {
      return absl::StrCat("cuda:", *gpu, " ", cuda::DeviceName(*gpu));
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

absl::StatusOr<TrainingDevice> OpenTrainingDevice(const TrainConfig& config, Communicator& comm,
                                                  const CommOptions& options, bool* out_of_step) {
  bool ignored = false;
  bool& failed_collective = out_of_step != nullptr ? *out_of_step : ignored;
  failed_collective = false;
  if (config.device == "cpu") {
    TrainingDevice d;
    d.backend = FindBackend(config.kernels);  // validated by ResolveTrainConfig
    CHECK(d.backend != nullptr) << "unknown --kernels " << config.kernels;
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
