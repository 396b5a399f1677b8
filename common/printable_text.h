// Text that crosses a trust boundary and ends up in a header or on a terminal: bearer
// tokens (gRPC aborts the process on a metadata value that is not printable ASCII),
// job and group names (a raw ESC or newline rewrites whoever's terminal prints them).
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace gantry {

// The first byte of `text` that is not printable, and where; none when `found` is false.
// Printable: valid UTF-8 without C0 controls (0x00-0x1F), DEL, or C1 controls
// (U+0080-U+009F). With `ascii_only`, any byte above 0x7E is not printable either.
struct UnprintableByte {
  bool found = false;
  size_t position = 0;       // byte offset
  unsigned char value = 0;   // the offending byte (the first byte of a C1 sequence)
};
UnprintableByte FindUnprintable(absl::string_view text, bool ascii_only);

// The first byte of `text` that is not part of well-formed UTF-8 (controls are fine):
// what a proto3 string field cannot carry.
UnprintableByte FindInvalidUtf8(absl::string_view text);

// A bearer token as given by a person or a file: surrounding whitespace (the newline of
// `$(cat tok)`, echo, or an editor; a CR from a Windows file) is removed; a token that is
// then empty, or holds any byte outside printable ASCII (0x20-0x7E), is refused with
// INVALID_ARGUMENT naming `source` ("--token", "GANTRY_TOKEN", "--token-file F"), the
// byte and its position, without echoing the token.
absl::StatusOr<std::string> CleanToken(absl::string_view raw, absl::string_view source);

// `text` safe to print on a terminal: every unprintable byte (FindUnprintable with
// ascii_only false) written as \n, \r, \t, \e or \xNN, and a backslash as \\, so the
// output is unambiguous and holds no control sequence. Printable UTF-8 passes unchanged.
std::string EscapeForTerminal(absl::string_view text);

// A name read from a file (a tensor name of a safetensors file or of a checkpoint's
// layout) as every message quotes it: its first kMaxQuotedNameBytes bytes through
// EscapeForTerminal (a NUL is \x00, so two names that differ only there print apart), then
// "… (N bytes)" when it is longer (a 50 MB name cannot fill a log).
inline constexpr size_t kMaxQuotedNameBytes = 200;
std::string NameForMessage(absl::string_view name);

// "byte 0x1b at position 3": how the messages above name an unprintable byte.
std::string DescribeUnprintable(const UnprintableByte& bad);

// OK when `text` is printable (FindUnprintable with ascii_only false); else
// INVALID_ARGUMENT "FIELD: holds a control character or invalid UTF-8 (byte 0x1b at
// position 3); WHAT is one line of printable text", e.g. field "hosts[1]", what "a host
// name". For names that other people's terminals will print.
absl::Status CheckPrintableField(absl::string_view field, absl::string_view text, absl::string_view what);

}  // namespace gantry
