// The 16-bit copies and the loss scaler's passes, bit for bit against the functions
// they stand for (common/bf16.h's FromFloat, bf16_wire.h's WireBf16 and Bf16ToFloat, one
// fp32 product), over values that reach every rounding case (ties, denormals, Inf, NaN,
// overflow) at lengths with tails; nothing past `count` may be written. The unscale
// passes' verdict must see one Inf or NaN anywhere.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common/bf16.h"
#include "gtest/gtest.h"
#include "tests/testing/backend_ops/checks.h"
#include "tests/testing/backend_ops/values.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/tensor/random.h"

namespace gantry::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Elements past `count` in every buffer: they must come back as they went in.
constexpr int64_t kGuard = 3;

template <typename Body>
void ForEachSixteenBitCount(OpRun& run, const Body& body) {
  for (int64_t count : run.shapes<int64_t>()) {
    SCOPED_TRACE("count " + std::to_string(count));
    body(count);
  }
}

// count + kGuard floats: the special values first (so short lengths hold them too), then
// normal draws times 100.
Tensor Values(int64_t count) {
  const float special[] = {1.0f + 0x1p-8f,
                           1.0f + 0x1p-7f + 0x1p-8f,
                           0x1p-130f,
                           -0x1p-140f,
                           0.0f,
                           -0.0f,
                           kInf,
                           -kInf,
                           std::numeric_limits<float>::quiet_NaN(),
                           3.4e38f,
                           -65504.0f,
                           std::bit_cast<float>(0x7f800001u),
                           1.0f};
  Tensor v = Tensor::Zeros(Shape{count + kGuard});
  Rng rng(4);
  for (int64_t i = 0; i < v.numel(); ++i) {
    v.data()[i] = i < static_cast<int64_t>(std::size(special)) ? special[i] : static_cast<float>(rng.Normal() * 100.0);
  }
  return v;
}

// A bf16 tensor on the host holding `bits`, and the bits of a (host) bf16 tensor.
Tensor Bf16Tensor(const std::vector<uint16_t>& bits) {
  Tensor t = Tensor::Zeros(Shape{static_cast<int64_t>(bits.size())}, DType::kBF16);
  std::memcpy(static_cast<void*>(t.data_bf16()), bits.data(), bits.size() * sizeof(uint16_t));
  return t;
}
std::vector<uint16_t> Bits(const Tensor& t) {
  std::vector<uint16_t> bits(static_cast<size_t>(t.numel()));
  std::memcpy(bits.data(), static_cast<const void*>(t.data_bf16()), bits.size() * sizeof(uint16_t));
  return bits;
}
uint16_t* BitsOf(const Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_bf16()); }

// Compares 16-bit patterns exactly (a NaN matching any NaN) as floats widened exactly,
// so the sign of zero counts too.
void ExpectSameBits(const OpRun& run, std::string_view output, const std::vector<uint16_t>& actual,
                    const std::vector<uint16_t>& expected, const std::string& where) {
  std::vector<double> a(actual.size()), e(expected.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = Bf16ToFloat(actual[i]), e[i] = Bf16ToFloat(expected[i]);
  bool signs_match = true;
  for (size_t i = 0; i < a.size(); ++i) signs_match &= (actual[i] >> 15) == (expected[i] >> 15) || std::isnan(e[i]);
  EXPECT_TRUE(signs_match) << output << " (" << where << "): a sign bit differs";
  const Shape shape{static_cast<int64_t>(a.size())};
  run.Expect(output, Floats(a, shape), Floats(e, shape), Tensor(), where);
}

// Unscaled gradients: draws times 1e4 and 1e4 / 65536.
constexpr float kInvScale = 1.0f / 65536.0f;
Tensor Gradients(int64_t count) {
  Tensor g = Tensor::Zeros(Shape{count + kGuard});
  Rng rng(16);
  for (int64_t i = 0; i < g.numel(); ++i) g.data()[i] = static_cast<float>(rng.Normal() * 1e4);
  return g;
}

// Where one non-finite value goes (none, first, middle, last) and which.
struct Poison {
  int64_t at;  // -1: none
  float value;
};
std::vector<Poison> Poisons(int64_t count) {
  std::vector<Poison> out = {{-1, 0.0f}};
  if (count == 0) return out;
  for (int64_t at : {int64_t{0}, count / 2, count - 1}) {
    for (float v : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN()}) out.push_back({at, v});
  }
  return out;
}

// grads[0, count) *= inv_scale on the backend; returns the verdict and the host buffer.
bool RunUnscale(OpRun& run, int64_t count, float inv_scale, const Tensor& grads, Tensor& out) {
  const Tensor g = run.Put(grads);
  const bool finite = run.backend().UnscaleAndCheckFinite(count, inv_scale, g.data());
  out = OpRun::Get(g);
  return finite;
}

Tensor Verdict(bool finite) { return Tensor::FromVector(Shape{1}, {finite ? 1.0f : 0.0f}); }

}  // namespace

void CheckNarrowToBf16(OpRun& run) {
  ForEachSixteenBitCount(run, [&](int64_t count) {
    const Tensor v = Values(count);
    std::vector<uint16_t> expected(static_cast<size_t>(v.numel()), 0xabcd);
    for (int64_t i = 0; i < count; ++i) expected[static_cast<size_t>(i)] = bf16::FromFloat(v.data()[i]).bits;
    const Tensor to = run.Put(Bf16Tensor(std::vector<uint16_t>(expected.size(), 0xabcd)));
    run.backend().NarrowToBf16(count, run.Put(v).data(), BitsOf(to));
    ExpectSameBits(run, "bits", Bits(OpRun::Get(to)), expected, "bf16::FromFloat (denormals kept)");
  });
}

void CheckWidenFromBf16(OpRun& run) {
  ForEachSixteenBitCount(run, [&](int64_t count) {
    const Tensor v = Values(count);
    std::vector<uint16_t> bits(static_cast<size_t>(v.numel()));
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = bf16::FromFloat(v.data()[static_cast<int64_t>(i)]).bits;
    if (count > 0) bits[0] = 0x0001;  // the smallest bf16 denormal
    Tensor expected = Tensor::Zeros(v.shape());
    expected.Fill(-7.0f);
    for (int64_t i = 0; i < count; ++i) expected.data()[i] = Bf16ToFloat(bits[static_cast<size_t>(i)]);
    const Tensor to = run.Put(Tensor::Zeros(v.shape()));
    to.Fill(-7.0f);
    run.backend().WidenFromBf16(count, BitsOf(run.Put(Bf16Tensor(bits))), to.data());
    run.Expect("values", OpRun::Get(to), expected, Tensor(), "the float of each bf16 (exact)");
  });
}

void CheckToWireBf16(OpRun& run) {
  ForEachSixteenBitCount(run, [&](int64_t count) {
    const Tensor v = Values(count);
    std::vector<uint16_t> expected(static_cast<size_t>(v.numel()), 0xabcd);
    for (int64_t i = 0; i < count; ++i) expected[static_cast<size_t>(i)] = WireBf16(v.data()[i]);
    const Tensor wire = run.Put(Bf16Tensor(std::vector<uint16_t>(expected.size(), 0xabcd)));
    run.backend().ToWireBf16(count, run.Put(v).data(), BitsOf(wire));
    ExpectSameBits(run, "bits", Bits(OpRun::Get(wire)), expected, "WireBf16 (denormals flushed)");
  });
}

// Every element times inv_scale (Inf and NaN included), and the verdict; a finite value
// that the unscale overflows (a scale below 1) is not finite either.
void CheckUnscaleAndCheckFinite(OpRun& run) {
  ForEachSixteenBitCount(run, [&](int64_t count) {
    for (const Poison& poison : Poisons(count)) {
      SCOPED_TRACE("poison at " + std::to_string(poison.at) + ": " + std::to_string(poison.value));
      Tensor grads = Gradients(count), expected = grads.Clone(), out;
      if (poison.at >= 0) grads.data()[poison.at] = poison.value;
      for (int64_t i = 0; i < count; ++i) expected.data()[i] = grads.data()[i] * kInvScale;
      const bool finite = RunUnscale(run, count, kInvScale, grads, out);
      run.Expect("grads, verdict", out, expected, Tensor(), "grads *= inv_scale");
      run.Expect("grads, verdict", Verdict(finite), Verdict(poison.at < 0), Tensor(), "all finite");
    }
    if (count == 0) return;
    Tensor big = Gradients(count), out;
    big.data()[count - 1] = std::numeric_limits<float>::max() / 2;
    run.Expect("grads, verdict", Verdict(RunUnscale(run, count, 4.0f, big, out)), Verdict(false), Tensor(),
               "an unscale that overflows");
  });
}

// grads = float(wire) * inv_scale from bf16 wire values (WireBf16 of gradients), with
// Inf, -Inf and NaN patterns (a canonical and a payload one) as poison.
void CheckUnscaleFromBf16AndCheckFinite(OpRun& run) {
  ForEachSixteenBitCount(run, [&](int64_t count) {
    const Tensor source = Gradients(count);
    std::vector<std::pair<int64_t, uint16_t>> poisons = {{-1, 0}};  // (where, pattern); -1: none
    for (int64_t at : {int64_t{0}, count / 2, count - 1}) {
      for (uint16_t bits : {uint16_t{0x7f80}, uint16_t{0xff80}, kWireNan, uint16_t{0xffc1}}) {
        if (count > 0) poisons.emplace_back(at, bits);
      }
    }
    for (const auto& [at, bits] : poisons) {
      SCOPED_TRACE("poison " + std::to_string(bits) + " at " + std::to_string(at));
      std::vector<uint16_t> wire(static_cast<size_t>(source.numel()));
      for (size_t i = 0; i < wire.size(); ++i) wire[i] = WireBf16(source.data()[static_cast<int64_t>(i)]);
      if (at >= 0) wire[static_cast<size_t>(at)] = bits;
      Tensor expected = Tensor::Zeros(source.shape());
      expected.Fill(-7.0f);
      for (int64_t i = 0; i < count; ++i) expected.data()[i] = Bf16ToFloat(wire[static_cast<size_t>(i)]) * kInvScale;
      const Tensor grads = run.Put(expected);
      grads.Fill(-7.0f);
      const bool finite = run.backend().UnscaleFromBf16AndCheckFinite(count, BitsOf(run.Put(Bf16Tensor(wire))),
                                                                      kInvScale, grads.data());
      run.Expect("grads, verdict", OpRun::Get(grads), expected, Tensor(), "grads = float(wire) * inv_scale");
      run.Expect("grads, verdict", Verdict(finite), Verdict(at < 0), Tensor(), "all finite");
    }
  });
}

}  // namespace gantry::testing
