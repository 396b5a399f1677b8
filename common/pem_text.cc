#include "common/pem_text.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

constexpr absl::string_view kBegin = "-----BEGIN ";
constexpr absl::string_view kEnd = "-----END ";
constexpr absl::string_view kDashes = "-----";

// True when `der` is one DER element (a SEQUENCE, as certificates and keys are) whose
// encoded length is exactly the rest of the bytes.
bool IsOneDerSequence(absl::string_view der) {
  if (der.size() < 2 || static_cast<unsigned char>(der[0]) != 0x30) return false;
  const unsigned char first = static_cast<unsigned char>(der[1]);
  size_t header = 2, length = first;
  if (first & 0x80) {
    const size_t bytes = first & 0x7f;
    if (bytes == 0 || bytes > 4 || der.size() < 2 + bytes) return false;
    length = 0;
    for (size_t i = 0; i < bytes; ++i) length = (length << 8) | static_cast<unsigned char>(der[2 + i]);
    header += bytes;
  }
  return header + length == der.size();
}

bool WantedLabel(absl::string_view label, PemContent kind) {
  if (kind == PemContent::kCertificates) return label == "CERTIFICATE";
  return label == "PRIVATE KEY" || label == "RSA PRIVATE KEY" || label == "EC PRIVATE KEY";
}

std::string KindName(PemContent kind) {
  return kind == PemContent::kCertificates ? "a PEM certificate (-----BEGIN CERTIFICATE-----)"
                                           : "an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)";
}

absl::Status Bad(absl::string_view source, const std::string& why, PemContent kind) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", why, "; give ", KindName(kind)));
}

}  // namespace

absl::Status CheckPemText(absl::string_view text, PemContent kind, absl::string_view source) {
  int blocks = 0, wanted = 0;
  for (size_t at = text.find(kBegin); at != absl::string_view::npos; at = text.find(kBegin, at)) {
    const size_t label_start = at + kBegin.size();
    const size_t label_end = text.find(kDashes, label_start);
    if (label_end == absl::string_view::npos) return Bad(source, "a BEGIN line is cut short", kind);
    const absl::string_view label = text.substr(label_start, label_end - label_start);
    const std::string end_line = absl::StrCat(kEnd, label, kDashes);
    const size_t body_start = label_end + kDashes.size();
    const size_t end = text.find(end_line, body_start);
    if (end == absl::string_view::npos) {
      return Bad(source, absl::StrCat("the ", label, " block has no END line (the file is cut short?)"), kind);
    }
    std::string body(text.substr(body_start, end - body_start));
    body.erase(std::remove_if(body.begin(), body.end(), [](char c) { return absl::ascii_isspace(c); }), body.end());
    std::string der;
    if (absl::StrContains(body, ":") || !absl::Base64Unescape(body, &der) || !IsOneDerSequence(der)) {
      return Bad(source, absl::StrCat("the ", label, " block is damaged (not base64 of one DER structure)"), kind);
    }
    if (kind == PemContent::kPrivateKey && label == "ENCRYPTED PRIVATE KEY") {
      return Bad(source, "the key is encrypted (gRPC cannot ask for its passphrase)", kind);
    }
    ++blocks;
    if (WantedLabel(label, kind)) ++wanted;
    at = end + end_line.size();
  }
  if (blocks == 0) return Bad(source, "holds no PEM block (is it the right file?)", kind);
  if (wanted == 0) return Bad(source, "holds PEM blocks, but none of the kind needed here", kind);
  return absl::OkStatus();
}

}  // namespace gantry
