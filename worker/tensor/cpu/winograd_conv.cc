#include "worker/tensor/cpu/winograd_conv.h"

#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/grow_buffer.h"

namespace gantry {
namespace {

constexpr int64_t kOut = 3;                   // outputs along each side of a tile (m)
constexpr int64_t kTaps = 4;                  // the kernel's side (r)
constexpr int64_t kPatch = kOut + kTaps - 1;  // 6: the side of an input patch
constexpr int64_t kPoints = kPatch * kPatch;  // 36: GEMMs per pass
constexpr int64_t kLanes = 16;                // kernels transformed together

// --- the 1-D transforms, each on n independent lanes ---------------------------------
// Written out from the matrices for the points 0, 1, -1, -2, 1/2 and infinity (Toom-Cook:
// A^T and G from the points, B^T solved so the identity holds exactly; scripts/
// winograd_matrices.py derives and prints them). The test checks the whole convolution
// against the direct sum, so a wrong coefficient fails it.
constexpr float kThird = 1.0f / 3.0f;
constexpr float kFifteenth = 1.0f / 15.0f;

// o = B^T d (6 -> 6): the input patch's transform, shared by F(3, 4) and F(4, 3).
GANTRY_VECTOR_CLONES
void InputTransform(int64_t n, const float* __restrict d0, const float* __restrict d1, const float* __restrict d2,
                    const float* __restrict d3, const float* __restrict d4, const float* __restrict d5,
                    float* __restrict o0, float* __restrict o1, float* __restrict o2, float* __restrict o3,
                    float* __restrict o4, float* __restrict o5) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = d0[i], b = d1[i], c = d2[i], d = d3[i], e = d4[i], f = d5[i];
    o0[i] = a - 1.5f * b - 2.0f * c + 1.5f * d + e;
    o1[i] = 0.5f * c - b + 2.5f * d + e;
    o2[i] = b - 2.5f * c + 0.5f * d + e;
    o3[i] = 0.5f * b - c - 0.5f * d + e;
    o4[i] = 2.0f * d - 2.0f * b - c + e;
    o5[i] = b - 1.5f * c - 2.0f * d + 1.5f * e + f;
  }
}

// o = G g (4 -> 6): a kernel row's transform for F(3, 4).
GANTRY_VECTOR_CLONES
void KernelTransform(int64_t n, const float* __restrict g0, const float* __restrict g1, const float* __restrict g2,
                     const float* __restrict g3, float* __restrict o0, float* __restrict o1, float* __restrict o2,
                     float* __restrict o3, float* __restrict o4, float* __restrict o5) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = g0[i], b = g1[i], c = g2[i], d = g3[i];
    o0[i] = a;
    o1[i] = (a + b + c + d) * kThird;
    o2[i] = (b - a + d - c) * kThird;
    o3[i] = (a - 2.0f * b + 4.0f * c - 8.0f * d) * kFifteenth;
    o4[i] = -(16.0f * a + 8.0f * b + 4.0f * c + 2.0f * d) * kFifteenth;
    o5[i] = d;
  }
}

// o = A^T m (6 -> 3): back from a transformed tile to F(3, 4)'s three outputs.
GANTRY_VECTOR_CLONES
void OutputTransform(int64_t n, const float* __restrict m0, const float* __restrict m1, const float* __restrict m2,
                     const float* __restrict m3, const float* __restrict m4, const float* __restrict m5,
                     float* __restrict o0, float* __restrict o1, float* __restrict o2) {
  for (int64_t i = 0; i < n; ++i) {
    o0[i] = m0[i] + m1[i] + m2[i] + m3[i] + m4[i];
    o1[i] = m1[i] - m2[i] - 2.0f * m3[i] + 0.5f * m4[i];
    o2[i] = m1[i] + m2[i] + 4.0f * m3[i] + 0.25f * m4[i] + m5[i];
  }
}

// o = G3 a (3 -> 6): an output-gradient tile row's transform for F(4, 3) (its "kernel").
GANTRY_VECTOR_CLONES
void GradTransform(int64_t n, const float* __restrict a0, const float* __restrict a1, const float* __restrict a2,
                   float* __restrict o0, float* __restrict o1, float* __restrict o2, float* __restrict o3,
                   float* __restrict o4, float* __restrict o5) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = a0[i], b = a1[i], c = a2[i];
    o0[i] = a;
    o1[i] = (a + b + c) * kThird;
    o2[i] = (b - a - c) * kThird;
    o3[i] = (a - 2.0f * b + 4.0f * c) * kFifteenth;
    o4[i] = -(16.0f * a + 8.0f * b + 4.0f * c) * kFifteenth;
    o5[i] = c;
  }
}

// o = A4^T m (6 -> 4): back to F(4, 3)'s four outputs, the kernel taps of dw.
GANTRY_VECTOR_CLONES
void WeightGradTransform(int64_t n, const float* __restrict m0, const float* __restrict m1,
                         const float* __restrict m2, const float* __restrict m3, const float* __restrict m4,
                         const float* __restrict m5, float* __restrict o0, float* __restrict o1, float* __restrict o2,
                         float* __restrict o3) {
  for (int64_t i = 0; i < n; ++i) {
    o0[i] = m0[i] + m1[i] + m2[i] + m3[i] + m4[i];
    o1[i] = m1[i] - m2[i] - 2.0f * m3[i] + 0.5f * m4[i];
    o2[i] = m1[i] + m2[i] + 4.0f * m3[i] + 0.25f * m4[i];
    o3[i] = m1[i] - m2[i] - 8.0f * m3[i] + 0.125f * m4[i] + m5[i];
  }
}

// dst[3i + k] = phase_k[i] for i < n.
GANTRY_VECTOR_CLONES
void Interleave(int64_t n, const float* __restrict p0, const float* __restrict p1, const float* __restrict p2,
                float* __restrict dst) {
  for (int64_t i = 0; i < n; ++i) {
    dst[3 * i] = p0[i];
    dst[3 * i + 1] = p1[i];
    dst[3 * i + 2] = p2[i];
  }
}

// phase_k[i] = src[3i + k] for i < n.
GANTRY_VECTOR_CLONES
void Deinterleave(int64_t n, const float* __restrict src, float* __restrict p0, float* __restrict p1,
                  float* __restrict p2) {
  for (int64_t i = 0; i < n; ++i) {
    p0[i] = src[3 * i];
    p1[i] = src[3 * i + 1];
    p2[i] = src[3 * i + 2];
  }
}

// --- geometry and scratch -------------------------------------------------------------

// One plane correlation: out[oy][ox] = sum over ky, kx of k[ky][kx] * in[oy + ky - pad][ox + kx - pad]
// (in reads 0 outside in_h x in_w), computed in 3x3 output tiles; the tiles past an odd
// edge compute a row or column that is dropped (outputs) or reads 0 (output gradients).
struct Tiling {
  int64_t in_h, in_w, pad, out_h, out_w;
  int64_t tiles_y() const { return (out_h + kOut - 1) / kOut; }
  int64_t tiles_x() const { return (out_w + kOut - 1) / kOut; }
  int64_t tiles() const { return tiles_y() * tiles_x(); }
  // The rows every tile's 6x6 patch reaches, and the columns of each phase (3i + k) of them.
  int64_t patch_rows() const { return kOut * tiles_y() + kTaps - 1; }
  int64_t patch_phase_cols() const { return tiles_x() + 1; }
};

struct WinogradScratch {
  std::vector<float> input, products, kernels, plane, kernel_block;
};
WinogradScratch& ThreadWinogradScratch() {
  thread_local WinogradScratch scratch;
  return scratch;
}

// Samples per chunk: enough for GEMMs about kTargetColumns tiles wide (the GEMMs' N), with
// the transformed operands of a chunk under kMaxChunkFloats (128 MB). Measured on
// PatchGAN's conv4 at batch 8 (ms per forward / backward-data / backward-weights, one
// thread): at 256 px (121 tiles a sample) 128 columns 73-80 / 82-92 / 72-89, 256: 78-91 /
// 89-106 / 80-87, 512: 107-110 / 110-115 / 88-95; at 128 px (25 tiles) 128: 20 / 30 / 19,
// 512: 23 / 42 / 22. Smaller chunks keep the transformed operands nearer the core.
constexpr int64_t kTargetColumns = 128;
constexpr int64_t kMaxChunkFloats = int64_t{32} << 20;

int64_t WinogradChunkSamples(int64_t batch, int64_t tiles_per_sample, int64_t channels_in_and_out) {
  const int64_t wanted = std::max<int64_t>(1, kTargetColumns / tiles_per_sample);
  const int64_t fit = kMaxChunkFloats / (kPoints * channels_in_and_out * tiles_per_sample);
  return std::clamp<int64_t>(std::min(wanted, fit), 1, batch);
}

// --- whole-plane transforms -------------------------------------------------------------

// v[point * point_stride + tile] = (B^T d B)[point] for the 6x6 patch d of each tile of one
// input plane (tiles row-major). `work` holds InputPlaneWorkFloats(t) floats.
int64_t InputPlaneWorkFloats(const Tiling& t) {
  const int64_t phase = t.patch_phase_cols(), rows = t.patch_rows();
  return kOut * phase + kOut * rows * phase + rows * kPatch * t.tiles_x();
}
void TransformInputPlane(const Tiling& t, const float* plane, float* v, int64_t point_stride, float* work) {
  const int64_t tx = t.tiles_x(), rows = t.patch_rows(), phase = t.patch_phase_cols();
  float* padded = work;                   // one padded row, 3 * phase floats
  float* p0 = padded + kOut * phase;      // [rows][phase]: columns 3i, 3i + 1, 3i + 2
  float* p1 = p0 + rows * phase;
  float* p2 = p1 + rows * phase;
  float* across = p2 + rows * phase;      // [rows][6][tx]: each row transformed along x
  for (int64_t r = 0; r < rows; ++r) {
    std::fill_n(padded, kOut * phase, 0.0f);
    const int64_t iy = r - t.pad;
    if (iy >= 0 && iy < t.in_h) {
      const int64_t count = std::min(t.in_w, kOut * phase - t.pad);  // pad >= 0 (WinogradConvApplies)
      if (count > 0) std::copy_n(plane + iy * t.in_w, count, padded + t.pad);
    }
    float* a = p0 + r * phase;
    float* b = p1 + r * phase;
    float* c = p2 + r * phase;
    Deinterleave(phase, padded, a, b, c);
    float* o = across + r * kPatch * tx;
    // Tile i's patch columns are 3i .. 3i + 5.
    InputTransform(tx, a, b, c, a + 1, b + 1, c + 1, o, o + tx, o + 2 * tx, o + 3 * tx, o + 4 * tx, o + 5 * tx);
  }
  const int64_t row = kPatch * tx, xi = kPatch * point_stride;
  for (int64_t ty = 0; ty < t.tiles_y(); ++ty) {
    const float* r0 = across + kOut * ty * row;  // patch rows 3ty .. 3ty + 5
    for (int64_t nu = 0; nu < kPatch; ++nu) {
      const float* c = r0 + nu * tx;
      float* dst = v + nu * point_stride + ty * tx;
      InputTransform(tx, c, c + row, c + 2 * row, c + 3 * row, c + 4 * row, c + 5 * row, dst, dst + xi,
                     dst + 2 * xi, dst + 3 * xi, dst + 4 * xi, dst + 5 * xi);
    }
  }
}

// The inverse: out_plane (out_h x out_w) = A^T m A for each tile's transformed products
// m[point * point_stride + tile].
int64_t OutputPlaneWorkFloats(const Tiling& t) { return kOut * kPatch * t.tiles_x() + 2 * kOut * t.tiles_x(); }
void TransformOutputPlane(const Tiling& t, const float* m, int64_t point_stride, float* out_plane, float* work) {
  const int64_t tx = t.tiles_x(), xi = kPatch * point_stride;
  float* down = work;                     // [3][6][tx]: the tile's columns reduced along y
  float* p0 = down + kOut * kPatch * tx;  // one output row's three column phases
  float* p1 = p0 + tx;
  float* p2 = p1 + tx;
  float* row = p2 + tx;  // 3 * tx floats
  for (int64_t ty = 0; ty < t.tiles_y(); ++ty) {
    for (int64_t nu = 0; nu < kPatch; ++nu) {
      const float* src = m + nu * point_stride + ty * tx;
      OutputTransform(tx, src, src + xi, src + 2 * xi, src + 3 * xi, src + 4 * xi, src + 5 * xi, down + nu * tx,
                      down + (kPatch + nu) * tx, down + (2 * kPatch + nu) * tx);
    }
    for (int64_t a = 0; a < kOut && kOut * ty + a < t.out_h; ++a) {
      const float* d = down + a * kPatch * tx;
      OutputTransform(tx, d, d + tx, d + 2 * tx, d + 3 * tx, d + 4 * tx, d + 5 * tx, p0, p1, p2);
      Interleave(tx, p0, p1, p2, row);
      std::copy_n(row, t.out_w, out_plane + (kOut * ty + a) * t.out_w);
    }
  }
}

// dyhat[point * point_stride + tile] = (G3 dy_tile G3^T)[point] for each 3x3 tile of one
// output-gradient plane (out_h x out_w, 0 past its edge).
int64_t GradPlaneWorkFloats(const Tiling& t) { return kOut * t.tiles_x() * (2 + kPatch); }
void TransformGradPlane(const Tiling& t, const float* plane, float* dyhat, int64_t point_stride, float* work) {
  const int64_t tx = t.tiles_x(), xi = kPatch * point_stride;
  float* padded = work;              // one row, 3 * tx floats
  float* p0 = padded + kOut * tx;    // its three column phases
  float* p1 = p0 + tx;
  float* p2 = p1 + tx;
  float* across = p2 + tx;           // [3][6][tx]
  for (int64_t ty = 0; ty < t.tiles_y(); ++ty) {
    for (int64_t a = 0; a < kOut; ++a) {
      std::fill_n(padded, kOut * tx, 0.0f);
      const int64_t oy = kOut * ty + a;
      if (oy < t.out_h) std::copy_n(plane + oy * t.out_w, t.out_w, padded);
      Deinterleave(tx, padded, p0, p1, p2);
      float* o = across + a * kPatch * tx;
      GradTransform(tx, p0, p1, p2, o, o + tx, o + 2 * tx, o + 3 * tx, o + 4 * tx, o + 5 * tx);
    }
    for (int64_t nu = 0; nu < kPatch; ++nu) {
      float* dst = dyhat + nu * point_stride + ty * tx;
      const float* c = across + nu * tx;
      GradTransform(tx, c, c + kPatch * tx, c + 2 * kPatch * tx, dst, dst + xi, dst + 2 * xi, dst + 3 * xi,
                    dst + 4 * xi, dst + 5 * xi);
    }
  }
}

// u[point][q] = (G g_q G^T)[point] for `count` 4x4 kernels, g_q the 16 taps at
// kernel_at(q), rotated 180 degrees where `rotate` (backward-data). A block of kernels at a
// time is gathered tap-major, so both stages run over long contiguous lanes and the block
// stays in cache.
template <typename KernelAt>
void TransformKernels(int64_t count, bool rotate, KernelAt kernel_at, float* u) {
  constexpr int64_t kTapCount = kTaps * kTaps, kBlock = 1024;
  float* taps = GrowBuffer(ThreadWinogradScratch().kernel_block, (kTapCount + kTaps * kPatch) * kBlock);  // [tap][j]
  float* across = taps + kTapCount * kBlock;  // [ky][nu][j]
  const int64_t xi = kPatch * count;
  for (int64_t q0 = 0; q0 < count; q0 += kBlock) {
    const int64_t n = std::min(kBlock, count - q0);
    for (int64_t j = 0; j < n; ++j) {
      const float* g = kernel_at(q0 + j);
      for (int64_t k = 0; k < kTapCount; ++k) taps[k * kBlock + j] = g[rotate ? kTapCount - 1 - k : k];
    }
    for (int64_t ky = 0; ky < kTaps; ++ky) {
      const float* g = taps + ky * kTaps * kBlock;
      float* o = across + ky * kPatch * kBlock;
      KernelTransform(n, g, g + kBlock, g + 2 * kBlock, g + 3 * kBlock, o, o + kBlock, o + 2 * kBlock,
                      o + 3 * kBlock, o + 4 * kBlock, o + 5 * kBlock);
    }
    const int64_t row = kPatch * kBlock;
    for (int64_t nu = 0; nu < kPatch; ++nu) {
      const float* g = across + nu * kBlock;
      float* dst = u + nu * count + q0;
      KernelTransform(n, g, g + row, g + 2 * row, g + 3 * row, dst, dst + xi, dst + 2 * xi, dst + 3 * xi,
                      dst + 4 * xi, dst + 5 * xi);
    }
  }
}

// u[point][o][c] = G w[o][c] G^T: the forward's transformed kernels.
void TransformForwardKernels(int64_t out_ch, int64_t in_ch, const float* w, float* u) {
  constexpr int64_t kTapCount = kTaps * kTaps;
  TransformKernels(out_ch * in_ch, false, [w](int64_t q) { return w + q * kTapCount; }, u);
}

// u[point][c][o] = G rot180(w[o][c]) G^T: backward-data's, with the channel roles swapped.
void TransformBackwardDataKernels(int64_t out_ch, int64_t in_ch, const float* w, float* u) {
  constexpr int64_t kTapCount = kTaps * kTaps;
  TransformKernels(out_ch * in_ch, true,
                   [w, out_ch, in_ch](int64_t q) { return w + ((q % out_ch) * in_ch + q / out_ch) * kTapCount; }, u);
}

// dw[o][c] += A4^T m[.][o][c] A4 for the transformed weight gradient m[point][o * in_ch + c].
void AddWeightGradients(int64_t count, const float* m, float* dw) {
  constexpr int64_t kTapCount = kTaps * kTaps;
  float down[kTaps * kPatch * kLanes];  // [ky][nu][lane]
  float taps[kTapCount * kLanes];       // [tap][lane]
  const int64_t xi = kPatch * count, ky_stride = kPatch * kLanes;
  for (int64_t q = 0; q < count; q += kLanes) {
    const int64_t lanes = std::min(kLanes, count - q);
    for (int64_t nu = 0; nu < kPatch; ++nu) {
      const float* src = m + nu * count + q;
      float* o = down + nu * kLanes;
      WeightGradTransform(lanes, src, src + xi, src + 2 * xi, src + 3 * xi, src + 4 * xi, src + 5 * xi, o,
                          o + ky_stride, o + 2 * ky_stride, o + 3 * ky_stride);
    }
    for (int64_t ky = 0; ky < kTaps; ++ky) {
      const float* d = down + ky * ky_stride;
      float* o = taps + ky * kTaps * kLanes;
      WeightGradTransform(lanes, d, d + kLanes, d + 2 * kLanes, d + 3 * kLanes, d + 4 * kLanes, d + 5 * kLanes, o,
                          o + kLanes, o + 2 * kLanes, o + 3 * kLanes);
    }
    for (int64_t i = 0; i < lanes; ++i) {
      float* g = dw + (q + i) * kTapCount;
      for (int64_t k = 0; k < kTapCount; ++k) g[k] += taps[k * kLanes + i];
    }
  }
}

// --- the passes ---------------------------------------------------------------------------

// out[n][o] = sum over c of the correlation (t) of in[n][c] with kernel [o][c], whose
// transforms are u[point][o][c]: the forward, and backward-data on rotated kernels.
void Correlate(const Tiling& t, int64_t batch, int64_t in_ch, int64_t out_ch, const float* in, const float* u,
               float* out, const LoweringGemm& gemm) {
  const int64_t per_sample = t.tiles();
  const int64_t chunk = WinogradChunkSamples(batch, per_sample, in_ch + out_ch);
  WinogradScratch& s = ThreadWinogradScratch();
  float* v = GrowBuffer(s.input, kPoints * in_ch * chunk * per_sample);
  float* m = GrowBuffer(s.products, kPoints * out_ch * chunk * per_sample);
  float* work = GrowBuffer(s.plane, std::max(InputPlaneWorkFloats(t), OutputPlaneWorkFloats(t)));
  const int64_t in_plane = t.in_h * t.in_w, out_plane = t.out_h * t.out_w;
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    const int64_t samples = std::min(chunk, batch - n0), cols = samples * per_sample;
    for (int64_t j = 0; j < samples; ++j) {
      for (int64_t c = 0; c < in_ch; ++c) {
        TransformInputPlane(t, in + ((n0 + j) * in_ch + c) * in_plane, v + c * cols + j * per_sample, in_ch * cols,
                            work);
      }
    }
    for (int64_t point = 0; point < kPoints; ++point) {
      gemm(false, false, out_ch, cols, in_ch, 1.0f, u + point * out_ch * in_ch, in_ch, v + point * in_ch * cols,
           cols, 0.0f, m + point * out_ch * cols, cols);
    }
    for (int64_t j = 0; j < samples; ++j) {
      for (int64_t o = 0; o < out_ch; ++o) {
        TransformOutputPlane(t, m + o * cols + j * per_sample, out_ch * cols, out + ((n0 + j) * out_ch + o) * out_plane,
                             work);
      }
    }
  }
}

Tiling ForwardTiling(const ConvProblem& p) {
  return Tiling{.in_h = p.in_height, .in_w = p.in_width, .pad = p.padding, .out_h = p.out_height,
                .out_w = p.out_width};
}

void CheckApplies(const ConvProblem& p) {
  CheckConvProblem(p);
  CHECK(WinogradConvApplies(p)) << "Winograd F(3x3, 4x4) convolution on " << p.ToString();
}

// The tiling of the plane `op` writes (only its output side is set).
Tiling WrittenPlane(const ConvProblem& p, ConvOp op) {
  const bool data = op == ConvOp::kBackwardData;
  return Tiling{.in_h = 0, .in_w = 0, .pad = 0, .out_h = data ? p.in_height : p.out_height,
                .out_w = data ? p.in_width : p.out_width};
}

}  // namespace

bool WinogradConvApplies(const ConvProblem& p) {
  // Not a kernel over the whole unpadded input: one output pixel is a matrix product (the
  // lowered route's), where 3x3 tiles would compute 8 pixels that do not exist and their
  // transforms cost accuracy on elements small against their terms.
  const bool covers_input = p.kernel_covers_input();
  return p.kernel == kTaps && p.stride == 1 && p.padding <= kTaps - 1 && !covers_input;
}

int64_t WinogradColumns(const ConvProblem& p, ConvOp op) { return p.batch * WrittenPlane(p, op).tiles(); }

double WinogradTileCoverage(const ConvProblem& p, ConvOp op) {
  const Tiling t = WrittenPlane(p, op);
  return static_cast<double>(t.out_h * t.out_w) / static_cast<double>(kOut * kOut * t.tiles());
}

void WinogradConvForward(const ConvProblem& p, const float* x, const float* w, float* y, const LoweringGemm& gemm) {
  CheckApplies(p);
  float* u = GrowBuffer(ThreadWinogradScratch().kernels, kPoints * p.out_channels * p.in_channels);
  TransformForwardKernels(p.out_channels, p.in_channels, w, u);
  Correlate(ForwardTiling(p), p.batch, p.in_channels, p.out_channels, x, u, y, gemm);
}

void WinogradConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx,
                              const LoweringGemm& gemm) {
  CheckApplies(p);
  float* u = GrowBuffer(ThreadWinogradScratch().kernels, kPoints * p.out_channels * p.in_channels);
  TransformBackwardDataKernels(p.out_channels, p.in_channels, w, u);
  // dx[iy] = sum over ky' of rot(w)[ky'] * dy[iy + ky' - (3 - padding)]: a correlation of dy.
  const Tiling t{.in_h = p.out_height, .in_w = p.out_width, .pad = kTaps - 1 - p.padding, .out_h = p.in_height,
                 .out_w = p.in_width};
  Correlate(t, p.batch, p.out_channels, p.in_channels, dy, u, dx, gemm);
}

void WinogradConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw,
                                 const LoweringGemm& gemm) {
  CheckApplies(p);
  const Tiling t = ForwardTiling(p);
  const int64_t in_ch = p.in_channels, out_ch = p.out_channels, per_sample = t.tiles();
  const int64_t chunk = WinogradChunkSamples(p.batch, per_sample, in_ch + out_ch);
  WinogradScratch& s = ThreadWinogradScratch();
  float* v = GrowBuffer(s.input, kPoints * in_ch * chunk * per_sample);
  float* g = GrowBuffer(s.products, kPoints * out_ch * chunk * per_sample);
  float* m = GrowBuffer(s.kernels, kPoints * out_ch * in_ch);
  float* work = GrowBuffer(s.plane, std::max(InputPlaneWorkFloats(t), GradPlaneWorkFloats(t)));
  const int64_t in_plane = t.in_h * t.in_w, out_plane = t.out_h * t.out_w;
  for (int64_t n0 = 0; n0 < p.batch; n0 += chunk) {
    const int64_t samples = std::min(chunk, p.batch - n0), cols = samples * per_sample;
    for (int64_t j = 0; j < samples; ++j) {
      for (int64_t c = 0; c < in_ch; ++c) {
        TransformInputPlane(t, x + ((n0 + j) * in_ch + c) * in_plane, v + c * cols + j * per_sample, in_ch * cols,
                            work);
      }
      for (int64_t o = 0; o < out_ch; ++o) {
        TransformGradPlane(t, dy + ((n0 + j) * out_ch + o) * out_plane, g + o * cols + j * per_sample,
                           out_ch * cols, work);
      }
    }
    // m[point] (out_ch x in_ch) += g[point] (out_ch x tiles) * v[point]^T (tiles x in_ch).
    const float beta = n0 == 0 ? 0.0f : 1.0f;
    for (int64_t point = 0; point < kPoints; ++point) {
      gemm(false, true, out_ch, in_ch, cols, 1.0f, g + point * out_ch * cols, cols, v + point * in_ch * cols, cols,
           beta, m + point * out_ch * in_ch, in_ch);
    }
  }
  AddWeightGradients(out_ch * in_ch, m, dw);
}

}  // namespace gantry
