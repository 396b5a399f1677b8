// A proto3 string holds UTF-8 and nothing else: gRPC cannot send a request with other
// bytes in a string (protobuf logs an error and the call fails with a message about
// serialization). Every request `gantry` sends is checked first, and text that is not
// UTF-8 is refused naming the flag or argument it came from.
#pragma once

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace gantry::cli {

// OK when every string field of `request` (nested and repeated ones too) is UTF-8; else
// INVALID_ARGUMENT "--name: not valid UTF-8 (byte 0xff at position 3); ...".
absl::Status CheckRequestText(const google::protobuf::Message& request);

}  // namespace gantry::cli
