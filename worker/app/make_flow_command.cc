#include "worker/app/make_flow_command.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/exit_codes.h"
#include "common/file_io.h"
#include "common/output_folder.h"
#include "common/status_macros.h"
#include "worker/app/process_group.h"
#include "worker/comm/broadcast_string.h"
#include "worker/flow/case_file.h"
#include "worker/flow/flow_writer.h"
#include "worker/flow/simulation.h"

namespace gantry {
namespace {

using flow::FlowRequest;
using flow::FlowResult;
using flow::FlowSetup;

void PrintSetup(const std::string& label, const FlowSetup& s) {
  const FlowRequest& r = s.request;
  std::printf(
      "%s: %dx%d, %s D = %g cells at (%g, %g); Re = %g on the diameter (Re = U D / nu, U = %g): nu = %.5f, tau = "
      "%.4f, Mach %.2f, cell Re %.1f; %lld warm-up steps (%g estimated periods) then %d frames every %d steps\n",
      label.c_str(), r.nx, r.ny, flow::ObstacleKindName(s.obstacle.kind), s.obstacle.diameter, s.obstacle.cx,
      s.obstacle.cy, r.re, r.u_lattice, s.nu, s.tau, s.mach(), s.cell_reynolds(),
      static_cast<long long>(s.warmup_steps), r.warmup_periods, r.frames, s.every);
  std::fflush(stdout);
}

std::string StrouhalText(const FlowResult& r) {
  if (!r.strouhal.found) return absl::StrCat("not measured (", r.strouhal.why_not, ")");
  return absl::StrFormat("%.4f over %d periods (probe uy zero crossings)", r.strouhal.strouhal, r.strouhal.periods);
}

// One case: simulate, write the folder. The progress lines name the rank and the case.
absl::StatusOr<FlowResult> RunCase(const FlowSetup& s, const std::string& dir, const std::string& label, int rank,
                                   double progress_seconds) {
  auto progress = [&](int64_t step, int64_t total, double mlups) {
    std::fprintf(stderr, "[rank %d] %s: step %lld/%lld (%.0f%%), %.1f MLUPS\n", rank, label.c_str(),
                 static_cast<long long>(step), static_cast<long long>(total), 100.0 * step / std::max<int64_t>(total, 1),
                 mlups);
  };
  absl::StatusOr<FlowResult> result = flow::SimulateFlow(s, Clock::Real(), progress, progress_seconds);
  if (!result.ok()) return result.status();
  if (absl::Status st = flow::WriteFlowCase(dir, s, *result); !st.ok()) return st;
  return result;
}

int RunOne(const std::string& out, const FlowRequest& request, double progress_seconds) {
  absl::StatusOr<FlowSetup> setup = flow::ResolveFlow(request);
  absl::Status free = setup.ok() ? CheckNewOutputFolder("--out", out, "make-flow") : setup.status();
  if (!free.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(free.message()).c_str());
    return kExitUsage;
  }
  PrintSetup(out, *setup);
  absl::StatusOr<FlowResult> r = RunCase(*setup, out, out, 0, progress_seconds);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(r.status().message()).c_str());
    return absl::IsInvalidArgument(r.status()) ? kExitUsage : kExitFailure;
  }
  std::printf("%s: %lld steps in %.1f s: %.1f MLUPS (fused D2Q9 step, one core); Strouhal %s\n", out.c_str(),
              static_cast<long long>(r->steps), r->total_seconds, r->mlups(), StrouhalText(*r).c_str());
  std::printf("wrote %s/frames.npy [%d, 3, %d, %d] (ux, uy, vorticity), %s/mask.npy, %s/flow.json\n", out.c_str(),
              setup->request.frames, setup->request.ny, setup->request.nx, out.c_str(), out.c_str());
  return kExitOk;
}

// The case file's text from rank 0 to every rank, with rank 0's read error (if any) in
// place of it, so every rank refuses the same file the same way.
absl::StatusOr<std::vector<FlowRequest>> ShareCases(Communicator& comm, const std::string& path,
                                                    const FlowRequest& base) {
  std::string message;
  if (comm.rank() == 0) {
    absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, flow::kMaxCaseFileBytes);
    message = bytes.ok() ? "T" + std::string(bytes->begin(), bytes->end())
                         : "E" + std::string(bytes.status().message());
  }
  CommOptions options;
  options.timeout_seconds = 120;
  if (absl::Status st = BroadcastString(comm, message, 0, options); !st.ok()) return st;
  if (message.empty() || message[0] != 'T') return absl::InvalidArgumentError(message.empty() ? "" : message.substr(1));
  return flow::ParseCases(message.substr(1), path, base);
}

// DIR/case-NNN of the k-th case.
std::string CaseFolder(const std::string& out, size_t k) {
  return absl::StrCat(out, "/", absl::StrFormat("case-%03d", k));
}

// Rank 0 checks that every case's folder is free (new or empty) before any case runs, and
// tells the others, so every rank refuses alike (with rank 0's message).
absl::Status AgreeCaseFoldersFree(Communicator& comm, const std::string& out, size_t cases) {
  std::string message;
  if (comm.rank() == 0) {
    for (size_t k = 0; k < cases && message.empty(); ++k) {
      const absl::Status free = CheckNewOutputFolder("--out", CaseFolder(out, k), "make-flow");
      if (!free.ok()) message = std::string(free.message());
    }
  }
  CommOptions options;
  options.timeout_seconds = 120;
  RETURN_IF_ERROR(BroadcastString(comm, message, 0, options));
  return message.empty() ? absl::OkStatus() : absl::InvalidArgumentError(message);
}

// The cases of the file, each resolved and its folder free, on every rank alike (same
// text, same rules, rank 0's verdict on the folders): all are checked before any runs.
absl::StatusOr<std::vector<FlowSetup>> PrepareCases(Communicator& comm, const std::string& out,
                                                    const std::string& cases_path, const FlowRequest& base) {
  ASSIGN_OR_RETURN(const std::vector<FlowRequest> cases, ShareCases(comm, cases_path, base));
  std::vector<FlowSetup> setups;
  for (size_t k = 0; k < cases.size(); ++k) {
    absl::StatusOr<FlowSetup> s = flow::ResolveFlow(cases[k]);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(cases_path, ": case ", k + 1, ": ", s.status().message()));
    }
    setups.push_back(*std::move(s));
  }
  RETURN_IF_ERROR(AgreeCaseFoldersFree(comm, out, setups.size()));
  return setups;
}

// Per case, the numbers the summary shows; a row of doubles so one Gather collects them.
struct CaseRow {
  double done = 0;  // 1 simulated and written, -1 failed, 0 not this rank's
  double strouhal = 0;
  double mlups = 0;
  double seconds = 0;
};

// Rank 0: the table of every case from the gathered rows (`all`: each rank's n rows, in
// rank order); returns how many failed.
size_t PrintSummary(const std::vector<FlowSetup>& setups, const std::vector<CaseRow>& all, int size,
                    const std::string& out) {
  const size_t n = setups.size();
  std::printf("\n| case | rank | Re | obstacle | D | seed | Strouhal | MLUPS | seconds |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  size_t failed = 0;
  for (size_t k = 0; k < n; ++k) {
    const int owner = static_cast<int>(k % static_cast<size_t>(size));
    const CaseRow& row = all[static_cast<size_t>(owner) * n + k];
    const FlowRequest& r = setups[k].request;
    const std::string st = row.done < 0 ? "FAILED" : row.strouhal < 0 ? "-" : absl::StrFormat("%.4f", row.strouhal);
    std::printf("| case-%03zu | %d | %g | %s | %g | %llu | %s | %.1f | %.1f |\n", k, owner, r.re,
                flow::ObstacleKindName(setups[k].obstacle.kind), setups[k].obstacle.diameter,
                static_cast<unsigned long long>(r.seed), st.c_str(), row.mlups, row.seconds);
    failed += row.done < 0 ? 1 : 0;
  }
  std::printf("%zu of %zu cases written under %s\n", n - failed, n, out.c_str());
  return failed;
}

int RunCases(const std::string& out, const std::string& cases_path, const FlowRequest& base, double progress_seconds,
             int* argc, char*** argv) {
  absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return kExitFailure;
  }
  Communicator& comm = group->comm();
  const int rank = comm.rank(), size = comm.size();
  absl::StatusOr<std::vector<FlowSetup>> prepared = PrepareCases(comm, out, cases_path, base);
  if (!prepared.ok()) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", std::string(prepared.status().message()).c_str());
    return kExitUsage;
  }
  const std::vector<FlowSetup>& setups = *prepared;
  double total_updates = 0;
  for (const FlowSetup& s : setups) total_updates += static_cast<double>(s.total_steps()) * s.request.nx * s.request.ny;
  const size_t n = setups.size();
  if (rank == 0) {
    std::printf("%zu cases over %d rank%s (case k on rank k mod %d)\n", n, size, size == 1 ? "" : "s", size);
  }
  std::vector<CaseRow> rows(n);
  for (size_t k = static_cast<size_t>(rank); k < n; k += static_cast<size_t>(size)) {
    const std::string label = absl::StrFormat("case-%03d", k);
    const std::string dir = CaseFolder(out, k);
    if (size == 1) PrintSetup(dir, setups[k]);
    absl::StatusOr<FlowResult> r = RunCase(setups[k], dir, label, rank, progress_seconds);
    if (!r.ok()) {
      std::fprintf(stderr, "[rank %d] error: %s: %s\n", rank, label.c_str(), std::string(r.status().message()).c_str());
      rows[k].done = -1;
      continue;
    }
    rows[k] = CaseRow{1, r->strouhal.found ? r->strouhal.strouhal : -1, r->mlups(), r->total_seconds};
  }
  // Ranks finish at different times: the gather's bound is the whole data set's work at
  // a pessimistic 1 MLUPS on one rank, plus ten minutes.
  CommOptions gather_options;
  gather_options.timeout_seconds = total_updates / 1e6 + 600;
  const int64_t bytes = static_cast<int64_t>(n * sizeof(CaseRow));
  std::vector<CaseRow> all(rank == 0 ? n * static_cast<size_t>(size) : 0);
  if (absl::Status st = comm.Gather(rows.data(), bytes, rank == 0 ? all.data() : nullptr, 0, gather_options);
      !st.ok()) {
    std::fprintf(stderr, "[rank %d] error: %s\n", rank, std::string(st.message()).c_str());
    group->Exit(kExitFailure);
  }
  int failed = 0;
  for (const CaseRow& row : rows) failed += row.done < 0 ? 1 : 0;
  if (rank != 0) return failed > 0 ? kExitFailure : kExitOk;
  return PrintSummary(setups, all, size, out) > 0 ? kExitFailure : kExitOk;
}

}  // namespace

MakeFlowCommand::MakeFlowCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "make-flow", "simulate flow past an obstacle (D2Q9 lattice Boltzmann) and write frames.npy, mask.npy, flow.json");
  numbers_ = std::make_unique<NumberFlags>(command_);
  FlowRequest& r = request_;
  NumberFlags& n = *numbers_;
  command_->add_option("--out", out_, "a new (or empty) output folder (with --cases: DIR/case-NNN per case)")
      ->required();
  n.Int("--nx", &r.nx, flow::kGridRange, "grid cells along the stream [default: 256]");
  n.Int("--ny", &r.ny, flow::kGridRange, "grid cells across (periodic) [default: 64]");
  n.Real("--re", &r.re, flow::kReRange, "Reynolds number on the obstacle's diameter, U D / nu [default: 100]");
  n.Int("--frames", &r.frames, flow::kFramesRange, "frames to record [default: 200]");
  n.Int("--every", &r.every, flow::kEveryRange, "steps between frames [default: about 1/20 of the shedding period]");
  command_->add_option("--obstacle", r.obstacle, "cylinder | square [default: cylinder]");
  n.Real("--diameter", &r.diameter, flow::kDiameterRange,
         "obstacle diameter (or side) in cells [default: ny/8, at least 8]");
  n.Real("--obstacle-x", &r.obstacle_x, flow::kObstaclePositionRange,
         "the obstacle centre's distance from the inlet in cells, at least 2 D [default: nx/5, at least 2 D]");
  n.Real("--obstacle-y", &r.obstacle_y, flow::kObstaclePositionRange,
         "the obstacle centre's row, in cells from the bottom [default: ny/2]");
  n.Real("--u-lattice", &r.u_lattice, flow::kULatticeRange,
         "inlet velocity in lattice units, at most 0.17 [default: 0.1]");
  n.Real("--warmup-periods", &r.warmup_periods, flow::kWarmupPeriodsRange,
         "shedding periods (estimated as D / (0.2 U)) to run before recording [default: 10]");
  n.Seed("--seed", &r.seed, "seed of the initial perturbation [default: 1]");
  command_->add_option("--cases", cases_path_,
                       "YAML/JSON list of per-case overrides ({re, obstacle, obstacle_x, obstacle_y, seed, diameter, u_lattice, "
                       "nx, ny, frames, every, warmup_periods}); under mpirun the ranks share the cases");
  n.Real("--progress-seconds", &progress_seconds_, flow::kProgressSecondsRange,
         "seconds between progress lines [default: 10]");
  command_->footer(
      "Exit codes: 0 every case written; 1 a case failed while running (e.g. the disk is full); 2 bad flags, a bad "
      "case file, settings the solver refuses (the message gives the reason and the fix), or an --out (a case "
      "folder) that already holds files: make-flow never writes over a case.");
}

int MakeFlowCommand::Run(int* argc, char*** argv) {
  if (absl::Status s = numbers_->Parse(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  if (!cases_path_.empty()) return RunCases(out_, cases_path_, request_, progress_seconds_, argc, argv);
  if (MpiCommunicator::LaunchedUnderMpi()) {
    // One case on several ranks would simulate it N times into one folder.
    absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
    if (group.ok() && group->comm().size() > 1) {
      if (group->comm().rank() == 0) {
        std::fprintf(stderr,
                     "error: make-flow under mpirun -np %d needs --cases FILE (one simulation per rank); run a single "
                     "case without mpirun\n",
                     group->comm().size());
      }
      return kExitUsage;
    }
  }
  return RunOne(out_, request_, progress_seconds_);
}

}  // namespace gantry
