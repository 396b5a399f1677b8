// `gantry-worker generate`: samples from a trained run's generator (a checkpoint of its
// folder), computed in batches spread over the ranks of the process group with the same
// result on any number of ranks (worker/infer/batched_map.h), written by rank 0
// (generate_output.h). Image models (DCGAN) generate from latent vectors, next-frame
// models (Pix2Pix on flow) from condition frames (generator_inputs.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "runspec/generate_limits.h"
#include "worker/comm/communicator.h"
#include "worker/generate/generator_inputs.h"

namespace gantry {

struct GenerateRequest {
  std::string run_dir;          // --run
  int64_t checkpoint_step = 0;  // --checkpoint: a run step; 0: the newest usable checkpoint
  LatentRequest latent;         // image models: --count, --seed, --noise-file, --interpolate, --steps
  ConditionRequest condition;   // next-frame models: --count, --condition, --case, --frame
  std::string precision = "fp32";  // --precision: fp32 | bf16 (the products' operands)
  int64_t batch = 64;           // --batch: samples per generator call (part of the result's identity)
  std::string out;              // --out: a new (or empty) folder
  // This rank's wish to stop (a pool's cancel, SIGTERM or SIGINT): set on every rank or
  // on none. The ranks agree before generating and before each round of generator calls
  // (one call per rank) and stop together with CANCELLED; rank 0 asks it again before
  // each file it writes. A stopped attempt leaves no staging folder behind.
  std::function<bool()> should_stop;
};

enum class GenerateStage {
  kPreparing,   // refused before generating: every rank has the same error (or ABORTED
                // for another rank's), unless collective_failed
  kGenerating,  // in the collectives: the ranks may be out of step
  kWriting,     // rank 0 writing, after the generating collectives (with should_stop the
                // ranks still agree every 64 files whether to go on)
};

struct GenerateJobEnd {
  GenerateStage stage = GenerateStage::kPreparing;
  bool collective_failed = false;
  std::string out;     // rank 0: the folder written
  int64_t count = 0;   // samples generated
};

// Collective. INVALID_ARGUMENT (exit 2) for a bad request or input, naming the flag and
// the fix (a count of 0 or above kMaxGenerateSamples or what memory holds, an --out that
// holds something, a model that generates from neither); NOT_FOUND / DATA_LOSS for a
// run without (usable) checkpoints (trained_run.h); ABORTED on the ranks whose partner
// refused. `end` (optional) says how far it got.
absl::Status RunGenerateJob(Communicator& comm, const GenerateRequest& request, GenerateJobEnd* end = nullptr);

}  // namespace gantry
