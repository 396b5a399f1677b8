#include "common/crc32c.h"

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common/record_file.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

std::span<const uint8_t> Bytes(const std::vector<uint8_t>& v) { return {v.data(), v.size()}; }
std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// RFC 3720 (iSCSI), appendix B.4: CRC-32C of 32-byte patterns.
TEST(Crc32c, MatchesTheRfc3720Vectors) {
  EXPECT_EQ(Crc32c(Bytes(std::vector<uint8_t>(32, 0x00))), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(Bytes(std::vector<uint8_t>(32, 0xFF))), 0x62A8AB43u);
  std::vector<uint8_t> up(32);
  std::iota(up.begin(), up.end(), uint8_t{0});
  EXPECT_EQ(Crc32c(Bytes(up)), 0x46DD794Eu);
  std::vector<uint8_t> down(up.rbegin(), up.rend());
  EXPECT_EQ(Crc32c(Bytes(down)), 0x113FDB5Cu);
}

TEST(Crc32c, MatchesTheCatalogueCheckValue) {
  // The "check" value of CRC-32/ISCSI in the catalogue of parametrised CRCs.
  EXPECT_EQ(Crc32c(Bytes(std::string("123456789"))), 0xE3069283u);
  EXPECT_EQ(Crc32c({}), 0u);
}

TEST(Crc32c, ContinuesAcrossPieces) {
  const std::string all = "the quick brown fox jumps over the lazy dog";
  const uint32_t head = Crc32c(Bytes(all.substr(0, 10)));
  EXPECT_EQ(Crc32c(Bytes(all.substr(10)), head), Crc32c(Bytes(all)));
}

TEST(Crc32c, MaskRoundTripsAndIsTensorFlowsRotation) {
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(1u << 15), 0xa282ead9u);  // rotated right by 15: bit 15 becomes bit 0
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u}) EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(crc)), crc);
}

TEST(RecordFile, RoundTripsRecordsOfAnyLength) {
  std::string file;
  const std::vector<std::string> records = {"", "a", std::string(1000, '\x7f'), "brain.Event:2"};
  for (const std::string& r : records) AppendRecord(r, &file);
  EXPECT_EQ(file.size(), 4 * 16 + 0 + 1 + 1000 + 13);
  absl::StatusOr<std::vector<std::string>> back = ReadRecords(Bytes(file), "f");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, records);
}

TEST(RecordFile, FramingIsLittleEndianLengthThenMaskedCrcs) {
  std::string file;
  AppendRecord("xyz", &file);
  ASSERT_EQ(file.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(file.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  uint32_t length_crc = 0, data_crc = 0;
  std::memcpy(&length_crc, file.data() + 8, 4);  // the test machines are little-endian
  std::memcpy(&data_crc, file.data() + 15, 4);
  EXPECT_EQ(length_crc, MaskCrc32c(Crc32c(Bytes(file.substr(0, 8)))));
  EXPECT_EQ(data_crc, MaskCrc32c(Crc32c(Bytes(std::string("xyz")))));
}

TEST(RecordFile, NamesACorruptOrTornRecord) {
  std::string file;
  AppendRecord("first", &file);
  AppendRecord("second", &file);
  std::string flipped = file;
  flipped[21 + 12 + 2] ^= 0x01;  // a data byte of record 1
  absl::StatusOr<std::vector<std::string>> bad = ReadRecords(Bytes(flipped), "events");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("events: record 1 at byte 21: the data's CRC"), std::string::npos)
      << bad.status();
  std::string length_flipped = file;
  length_flipped[0] ^= 0x01;
  EXPECT_NE(ReadRecords(Bytes(length_flipped), "e").status().message().find("length's CRC"), std::string::npos);
  absl::StatusOr<std::vector<std::string>> torn = ReadRecords(Bytes(file.substr(0, file.size() - 2)), "e");
  EXPECT_NE(torn.status().message().find("record 1 at byte 21: the file ends inside"), std::string::npos)
      << torn.status();
}

}  // namespace
}  // namespace gantry
