// Deterministic random numbers, identical on every platform and standard library (so a
// seed means the same run everywhere, and replicas agree bit for bit).
#pragma once

#include <cstdint>

namespace gantry {

// SplitMix64 finaliser: a high-quality 64-bit mix of x.
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform float in [0, 1) that is a pure function of (seed, index): the counter-based
// draw used by dropout, so any backend can reproduce a mask element independently.
inline float HashUniform(uint64_t seed, uint64_t index) {
  return static_cast<float>(Mix64(seed ^ Mix64(index)) >> 40) * (1.0f / 16777216.0f);
}

// A sequential generator (SplitMix64). Its whole state is one integer, which makes it
// trivial to checkpoint and restore.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}

  uint64_t NextU64() {
    state_ += 0x9e3779b97f4a7c15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(NextU64() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : NextU64() % n; }
  // Standard normal by Box-Muller (one value per call; simple, deterministic).
  double Normal();

  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

}  // namespace gantry
