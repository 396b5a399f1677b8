// PEM files named on a command line (gantry --tls-ca, gantry-coordinator --tls-cert and
// --tls-key, gantry-worker serve --tls-ca), checked before gRPC sees them. gRPC takes
// junk without a word and then fails every connection ("empty address list", a failed
// handshake) with nothing that names the file, and a client would retry forever.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gantry {

enum class PemContent {
  kCertificates,  // one or more "CERTIFICATE" blocks (a CA, or a chain)
  kPrivateKey,    // an unencrypted private key ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY")
};

// OK when every PEM block of `text` is whole (BEGIN and END lines of one label, a base64
// body that decodes to one DER structure of exactly the body's length) and at least one
// is of the kind asked for. INVALID_ARGUMENT naming `source` ("--tls-ca ca.pem") and what
// is wrong otherwise: no PEM block at all, a block cut short, a body that is not base64
// or not DER, only blocks of another kind (a key given as a certificate), an encrypted key.
absl::Status CheckPemText(absl::string_view text, PemContent kind, absl::string_view source);

}  // namespace gantry
