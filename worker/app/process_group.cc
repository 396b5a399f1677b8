#include "worker/app/process_group.h"

#include <unistd.h>

#include <cstdio>

#include "spdlog/spdlog.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_environment.h"

namespace gantry {
absl::StatusOr<ProcessGroup> ProcessGroup::Join(int* argc, char*** argv) {
  ProcessGroup group;
  if (!MpiCommunicator::LaunchedUnderMpi()) {
    group.local_ = LocalGroup(1).Rank(0);
    return group;
  }
  PreferRingNonBlockingAllReduce();
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> mpi = MpiCommunicator::Create(argc, argv);
  if (!mpi.ok()) return mpi.status();
  group.mpi_ = *std::move(mpi);
  return group;
}

void ProcessGroup::Exit(int code) {
  if (spdlog::default_logger()) spdlog::default_logger()->flush();
  std::fflush(nullptr);
  if (mpi_ && mpi_->size() > 1) mpi_->Abort(code);
  // Other threads (loaders, report senders) may still run: no destructors on the way out.
  _exit(code);
}

}  // namespace gantry
