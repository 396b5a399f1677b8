// The seam between a GAN and everything that trains it. The trainer, the data-parallel
// step, the model broadcast, checkpoints and the samples writer talk to a GanModel, never
// to a concrete network, so a second GAN (Pix2Pix, conditioned on an image) plugs in by
// implementing this class and registering a name in model_registry.cc.
//
// A model owns its two networks and their flat parameter buffers (one buffer per
// network: what the all-reduce, the optimizers and checkpoints move). It says what one
// data row looks like, how a batch of rows becomes the generator's and the
// discriminator's inputs, computes both networks' gradients for a step, and makes the
// generator inputs of the sample grid written after each epoch.
#pragma once

#include <cstdint>
#include <string>

#include "runspec/init_scheme.h"
#include "worker/layers/layer.h"
#include "worker/layers/sequential.h"
#include "worker/models/torch_names.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

namespace gantry {

// Who is told when each network's gradients become final during a step (see
// GradientsReadyHook); null: nobody. A model that does not pass them on is still correct:
// the caller then takes the gradients as final when ComputeGradients returns.
struct GanGradientHooks {
  GradientsReadyHook* generator = nullptr;
  GradientsReadyHook* discriminator = nullptr;
};

// One step's inputs on one rank: the rows of the global batch this rank holds.
struct GanInputs {
  Tensor real;             // [b, SampleShape()...]: the data rows D learns to call real
  Tensor generator_input;  // [b, ...]: what G turns into fakes (noise, or a condition image)
  int64_t row_offset = 0;  // the global batch's row of real's first row (Context::row_offset)
  GanGradientHooks gradients_ready;
};

struct GanStepResult {
  double d_loss = 0;
  double g_loss = 0;
  Tensor fake;         // G's output for the step's rows
  Tensor real_logits;  // D's logits on the real rows
  Tensor fake_logits;  // D's logits on the fake rows
};

// The factors the two mean losses are multiplied by before they are differentiated.
struct GanLossWeights {
  float d = 1.0f;  // D's loss -> D's gradient buffer
  float g = 1.0f;  // G's loss -> G's gradient buffer
};

class GanModel {
 public:
  virtual ~GanModel() = default;

  // The --model name that selects this model ("dcgan"); checkpoints record it.
  virtual std::string name() const = 0;

  virtual Sequential& generator() = 0;
  virtual Sequential& discriminator() = 0;
  virtual FlatParameters& g_params() = 0;
  virtual FlatParameters& d_params() = 0;

  // The shape of one data row, without the batch dimension ({1, 28, 28} for the DCGAN).
  virtual Shape SampleShape() const = 0;

  // Draws the initial weights of G then D from one stream seeded by `seed`, so one seed
  // gives one initial model whatever the device.
  void Initialize(InitScheme scheme, uint64_t seed);

  // This rank's inputs for rows [begin, end) of a global batch of `global_rows` rows,
  // given the data rows it holds (`rows`, already on `device`). Any randomness (the
  // DCGAN's noise) is drawn from `rng` for the WHOLE global batch and sliced, so the
  // global batch is the same whatever the number of ranks or their shares, and every
  // rank's `rng` advances alike. The inputs' row_offset is `begin`.
  virtual GanInputs StepInputs(const Tensor& rows, Rng& rng, int64_t global_rows, int64_t begin, int64_t end,
                               Device device) const = 0;

  // Zeroes both gradient buffers and fills D's with the gradients of weights.d times the
  // batch's mean D loss and G's with those of weights.g times its mean G loss (see
  // DataParallelStep for why the weights are share x loss scale). ctx.dropout_seed seeds
  // the step's dropout. No optimizer step is taken; the returned losses are unweighted.
  virtual GanStepResult ComputeGradients(const Context& ctx, const GanInputs& inputs,
                                         const GanLossWeights& weights) = 0;

  // The generator inputs of the sample grid written after each epoch (host memory):
  // the same for every epoch of a run, drawn from `rng`. Only for models whose
  // SamplesFromData() is false.
  virtual Tensor SampleInputs(Rng& rng, int64_t count) const = 0;

  // Told at the start of every epoch (0-based, of the batch size in training, resumed
  // epochs included) before its first step, so a model whose step changes over training
  // (Pix2Pix's --unroll-curriculum) follows the epoch, not the steps it happened to take.
  virtual void BeginEpoch(int64_t /*epoch*/) {}

  // Whether the sample grid's generator inputs come from data rows rather than from an
  // Rng: a conditional GAN (Pix2Pix) is shown on fixed validation rows, which the caller
  // picks and passes to SampleInputsFromRows instead of calling SampleInputs.
  virtual bool SamplesFromData() const { return false; }
  // The generator inputs (host memory) for data rows [count, SampleShape()...] (host
  // memory). Only for models whose SamplesFromData() is true (CHECK-fails otherwise).
  virtual Tensor SampleInputsFromRows(const Tensor& rows) const;

  // The state_dict keys of `network`'s PyTorch twin (torch_names.h), for export and
  // --init-from; empty for a model that has none (export and --init-from refuse it).
  virtual TorchNames TorchStateDictNames(GanNetwork /*network*/) const { return {}; }
};

}  // namespace gantry
