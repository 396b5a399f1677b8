#include "common/crc32c.h"

#include <array>

namespace gantry {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed
constexpr uint32_t kMaskDelta = 0xa282ead8u;

// table[b]: the CRC register after shifting byte b through it (one byte at a time).
constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int bit = 0; bit < 8; ++bit) r = (r & 1u) ? (r >> 1) ^ kPolynomial : r >> 1;
    table[b] = r;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  uint32_t r = ~crc;
  for (uint8_t b : bytes) r = kTable[(r ^ b) & 0xffu] ^ (r >> 8);
  return ~r;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rotated = masked - kMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace gantry
