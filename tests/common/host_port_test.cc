#include "common/host_port.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(CheckAddressPort, RefusesPortsOutsideTheRangeNamingTheFlag) {
  // gRPC would serve 99999 on 34463 (modulo 65536) and 65536 on a random port.
  const absl::Status big = CheckAddressPort("--listen", "127.0.0.1:99999", PortZero::kAnyFree);
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(big.message(), HasSubstr("--listen 127.0.0.1:99999: port 99999 is out of range"));
  EXPECT_THAT(big.message(), HasSubstr("1..65535, or 0 for any free port"));
  EXPECT_FALSE(CheckAddressPort("--listen", "127.0.0.1:65536", PortZero::kAnyFree).ok());
  EXPECT_FALSE(CheckAddressPort("--listen", "0.0.0.0:123456789012345678901234", PortZero::kAnyFree).ok());
  EXPECT_THAT(CheckAddressPort("--listen", "127.0.0.1:-1", PortZero::kAnyFree).message(),
              HasSubstr("port -1 is not a port number; give a port in 1..65535"));
  EXPECT_THAT(CheckAddressPort("--listen", "127.0.0.1:", PortZero::kAnyFree).message(), HasSubstr("no port"));
}

TEST(CheckAddressPort, ZeroMeansAnyFreePortOnlyForAServer) {
  EXPECT_TRUE(CheckAddressPort("--listen", "127.0.0.1:0", PortZero::kAnyFree).ok());
  const absl::Status client = CheckAddressPort("--coordinator", "127.0.0.1:0", PortZero::kRefused);
  EXPECT_FALSE(client.ok());
  EXPECT_THAT(client.message(), HasSubstr("give a port in 1..65535"));
}

// gRPC listens on port 443 for an address without one, without a word.
TEST(CheckAddressPort, AServerAddressNeedsAPort) {
  for (const char* host_only : {"127.0.0.1", "localhost", "[::1]", "0.0.0.0"}) {
    const absl::Status s = CheckAddressPort("--listen", host_only, PortZero::kAnyFree);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << host_only;
    EXPECT_THAT(s.message(), HasSubstr(std::string("--listen ") + host_only + ": no port")) << host_only;
  }
  EXPECT_TRUE(CheckAddressPort("--listen", "unix:/run/gantry.sock", PortZero::kAnyFree).ok());
  EXPECT_TRUE(CheckAddressPort("--listen", "[::1]:50051", PortZero::kAnyFree).ok());
}

TEST(CheckAddressPort, AcceptsTheRangeAndLeavesOtherTargetsToGrpc) {
  for (const char* ok : {"127.0.0.1:1", "localhost:65535", "[::1]:50051", "0.0.0.0:00080", "coordinator",
                         "unix:/run/gantry.sock", "dns:///gantry.example:443"}) {
    EXPECT_TRUE(CheckAddressPort("--coordinator", ok, PortZero::kRefused).ok()) << ok;
  }
}

}  // namespace
}  // namespace gantry
