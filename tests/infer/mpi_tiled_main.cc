// Tiled map-reduce inference under a real `mpirun -np N`: three steps of a conv net in
// eval mode over the MPI ranks must give the same bits as one rank computing every tile
// (a one-rank local group in the same process), for each blend mode and two groupings.
// Not a gtest binary: every rank must take part in every collective.
#include <cstdio>
#include <vector>

#include "tests/infer/tile_net_harness.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"

int main(int argc, char** argv) {
  absl::StatusOr<std::unique_ptr<gantry::MpiCommunicator>> comm = gantry::MpiCommunicator::Create(&argc, &argv);
  if (!comm.ok()) {
    std::fprintf(stderr, "mpi_tiled_check: %s\n", comm.status().ToString().c_str());
    return 2;
  }
  const int rank = (*comm)->rank();
  int failures = 0;
  for (const char* blend : {"gaussian", "linear", "none"}) {
    for (int64_t group : {1, 4}) {
      std::vector<float> reference;
      const absl::Status local = gantry::RunRanks(1, [&](gantry::Communicator& one) -> absl::Status {
        absl::StatusOr<std::vector<float>> r = gantry::testing::RunTiledSteps(one, 40, 72, 16, 4, blend, group, 3, 3);
        if (r.ok()) reference = *std::move(r);
        return r.status();
      });
      absl::StatusOr<std::vector<float>> spread =
          gantry::testing::RunTiledSteps(**comm, 40, 72, 16, 4, blend, group, 3, 3);
      if (!local.ok() || !spread.ok()) {
        std::fprintf(stderr, "rank %d: %s / %s\n", rank, local.ToString().c_str(), spread.status().ToString().c_str());
        (*comm)->Abort(1);
      }
      const bool same = *spread == reference;
      std::printf("rank %d of %d: blend %s, group %ld: %s\n", rank, (*comm)->size(), blend, static_cast<long>(group),
                  same ? "bit-identical to one rank" : "DIFFERS from one rank");
      failures += same ? 0 : 1;
    }
  }
  return failures == 0 ? 0 : 1;
}
