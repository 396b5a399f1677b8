// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TensorBoard's
// record files (and of iSCSI, RFC 3720), and the "masked" form those records store.
#pragma once

#include <cstdint>
#include <span>

namespace gantry {

// CRC-32C of `bytes`, continuing from `crc` (the CRC of the bytes before; 0 to start).
uint32_t Crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);

// The masked CRC a TFRecord stores: rotate right by 15 bits, then add 0xa282ead8. A CRC
// of data that itself holds CRCs is then not trivially related to them.
uint32_t MaskCrc32c(uint32_t crc);
uint32_t UnmaskCrc32c(uint32_t masked);

}  // namespace gantry
