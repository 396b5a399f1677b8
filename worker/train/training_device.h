// --device cpu|cuda: where a run trains. The settings only check the name (they also
// resolve on the coordinator, which needs no GPU); every rank checks and opens its device
// when the job starts.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runspec/train_config.h"
#include "worker/comm/communicator.h"
#include "worker/tensor/backend.h"

namespace gantry {

// Whether this process can train on `device`: OK for "cpu", and for "cuda" in a CUDA
// build (GANTRY_HAVE_CUDA) on a machine where a CUDA device is visible; otherwise an
// InvalidArgument that says which of those is missing and names the fix.
absl::Status CheckTrainingDevice(const std::string& device);

// The CPU backend of --kernels (empty: the fastest this build has, DefaultBackendName),
// or INVALID_ARGUMENT when this build lacks it, naming what it has. The settings accept
// every kernel name the project knows; this is the worker's own check.
absl::StatusOr<Backend*> CpuKernels(const std::string& kernels);

// The device this rank would train on with --device cuda, for the coordinator's view of
// a pool ("cuda:0 NVIDIA H100 80GB HBM3": the GPU of its rank on its node), or "cpu" where
// the build has no CUDA or no GPU of its own is visible. Changes no CUDA state.
std::string DescribeRankDevice(Communicator& comm);

// What a job trains with on its device.
struct TrainingDevice {
  Backend* backend = nullptr;  // --kernels on the CPU; the CUDA backend for cuda
  // NCCL over the job's ranks for a GPU run of more than one rank (the gradients stay in
  // GPU memory); null: the job's own communicator all-reduces them.
  std::unique_ptr<Communicator> gradient_comm;
  std::string description;  // for the start-up log: "cpu (onednn kernels)", "cuda:0 (NVIDIA H100 ...)"
  std::string pci_bus_id;   // cuda: this rank's GPU ("0000:3B:00.0", for NVML); empty on the CPU
};

// Opens config.device on this rank. Collective on `comm`: for cuda every rank checks
// CheckTrainingDevice and takes GPU (its rank on its node) modulo the GPUs it sees (ranks
// running as threads all share the first GPU), the ranks agree that all of them have
// one, processes under MPI check that no two share a GPU (by host and PCI bus id) and
// join a NCCL communicator. A rank without a usable GPU returns why
// (INVALID_ARGUMENT or FAILED_PRECONDITION, naming it); the others return ABORTED.
// `out_of_step` (may be null) is set when a collective itself failed (the agreement, or
// joining NCCL): the ranks may then be in different places and should end the job.
absl::StatusOr<TrainingDevice> OpenTrainingDevice(const TrainConfig& config, Communicator& comm,
                                                  const CommOptions& options, bool* out_of_step = nullptr);

}  // namespace gantry
