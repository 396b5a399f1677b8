// Whole DCGAN training-step throughput: samples/s and achieved GFLOP/s per global batch
// size, on synthetic data (as shared/reference/dcgan_torch.py does, so the two print
// comparable tables). One process, or N ranks under mpirun (synchronous data parallel:
// each rank computes its share of the batch, gradients are all-reduced over MPI).
//
//   build/bin/gantry-bench-step --batch-size 64,128,256,512
//   mpirun -np 2 build/bin/gantry-bench-step --batch-size 64,128,256,512
// Reference: dcgan_torch.py --threads 1 [--ddp --world-size 2] --batch-size B
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "common/shard_plan.h"
#include "common/timing_summary.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/optim/adam.h"
#include "worker/tensor/random.h"
#include "worker/train/data_parallel_step.h"

namespace gantry {
namespace {

// 225,835,904 multiply-adds per sample per step (shared/reference/README.md counts them
// layer by layer): G forward, D forward on real and fake, and both gradient tapes.
constexpr double kFlopsPerSample = 2.0 * 225'835'904.0;

struct Row {
  double median_ms, p90_ms, allreduce_ms, samples_per_s, gflops;
};

Tensor Random(Rng& rng, const Shape& s, bool normal) {
  Tensor t = Tensor::Zeros(s);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data()[i] = static_cast<float>(normal ? rng.Normal() : 2.0 * rng.Uniform() - 1.0);
  }
  return t;
}

// Times `steps` steps after `warmup`; step times are rank 0's, after a barrier per step
// so every rank's step is inside it.
Row Measure(Communicator& comm, int64_t batch, int warmup, int steps) {
  Dcgan model(DcganConfig{});
  model.Initialize(InitScheme::kGlorotUniform, 1);
  Adam g_opt(AdamConfig{}, model.g_params().num_params());
  Adam d_opt(AdamConfig{}, model.d_params().num_params());
  const CommOptions opts{120.0};
  DataParallelStep step(model, g_opt, d_opt, comm, CpuBackend(), opts, /*sync_bn=*/false, Clock::Real());
  const RowRange rows = ShareRanges(EvenShares(batch, comm.size()))[static_cast<size_t>(comm.rank())];
  Rng rng(2 + static_cast<uint64_t>(comm.rank()));
  const Tensor real = Random(rng, Shape{rows.size(), 1, 28, 28}, false);
  std::vector<double> ms, allreduce_ms;
  CHECK(comm.Barrier(opts).ok());
  for (int i = 0; i < warmup + steps; ++i) {
    const Tensor z = Random(rng, Shape{rows.size(), 100}, true);
    const double t0 = Clock::Real().NowSeconds();
    auto r = step.Run(real, z, batch, static_cast<uint64_t>(i));
    CHECK(r.ok()) << std::string(r.status().message());
    if (i >= warmup) {
      ms.push_back((Clock::Real().NowSeconds() - t0) * 1e3);
      allreduce_ms.push_back(r->allreduce_s * 1e3);
    }
  }
  const double median = Percentile(ms, 0.5);
  const double sps = static_cast<double>(batch) * 1e3 / median;
  return Row{median, Percentile(ms, 0.9), Percentile(allreduce_ms, 0.5), sps, sps * kFlopsPerSample * 1e-9};
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-bench-step: DCGAN training-step throughput (1 thread per rank)"};
  std::vector<int64_t> batches{64, 128, 256, 512};
  int warmup = 3, steps = 10;
  app.add_option("--batch-size", batches, "global batch sizes")->delimiter(',');
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<MpiCommunicator> mpi;
  std::unique_ptr<Communicator> solo;
  if (MpiCommunicator::LaunchedUnderMpi()) {
    mpi = std::move(*MpiCommunicator::Create(&argc, &argv));
  } else {
    solo = LocalGroup(1).Rank(0);
  }
  Communicator& comm = mpi ? static_cast<Communicator&>(*mpi) : *solo;
  const bool root = comm.rank() == 0;
  if (root) {
    std::printf("DCGAN training step, backend %s, %d rank(s) x 1 thread, %d timed steps after %d warm-up\n",
                std::string(CpuBackend().name()).c_str(), comm.size(), steps, warmup);
    std::printf("%6s %6s %11s %9s %13s %11s %9s\n", "batch", "ranks", "median_ms", "p90_ms", "allreduce_ms",
                "samples/s", "GFLOP/s");
  }
  for (int64_t b : batches) {
    const Row r = Measure(comm, b, warmup, steps);
    if (root) {
      std::printf("%6ld %6d %11.1f %9.1f %13.2f %11.1f %9.1f\n", static_cast<long>(b), comm.size(), r.median_ms,
                  r.p90_ms, r.allreduce_ms, r.samples_per_s, r.gflops);
      std::fflush(stdout);
    }
  }
  return 0;
}
