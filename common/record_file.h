// TFRecord framing, the container of TensorBoard's event files: each record is
//   u64 length, u32 masked CRC-32C of those 8 bytes, `length` bytes of data,
//   u32 masked CRC-32C of the data
// with integers little-endian (crc32c.h has the mask). The framing knows nothing of what
// the records hold.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Appends one framed record holding `data` to `out`.
void AppendRecord(std::string_view data, std::string* out);

// Every record of `file`, in order, each checked against both of its CRCs. DATA_LOSS,
// naming `name`, the record's index and its byte offset, for a torn record (the file
// ends inside it) or a CRC that does not match.
absl::StatusOr<std::vector<std::string>> ReadRecords(std::span<const uint8_t> file, const std::string& name);

}  // namespace gantry
