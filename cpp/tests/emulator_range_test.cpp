// The data feed's Range interpretation (RFC 9110 section 14).
#include <gtest/gtest.h>

#include "range.h"

namespace emu = vehicledata::emulator;
using Kind = emu::ByteRange::Kind;

TEST(EmulatorRange, OneRangeIsServedAndClamped) {
    auto r = emu::parse_byte_range("bytes=100-1123", 5000);
    EXPECT_EQ(r.kind, Kind::Partial);
    EXPECT_EQ(r.first, 100u);
    EXPECT_EQ(r.last, 1123u);
    EXPECT_EQ(emu::content_range(r, 5000), "bytes 100-1123/5000");
    r = emu::parse_byte_range("bytes=4990-99999", 5000);
    EXPECT_EQ(emu::content_range(r, 5000), "bytes 4990-4999/5000");
    r = emu::parse_byte_range("Bytes = 10-", 5000);
    EXPECT_EQ(emu::content_range(r, 5000), "bytes 10-4999/5000");
    r = emu::parse_byte_range("bytes=-10", 5000);
    EXPECT_EQ(emu::content_range(r, 5000), "bytes 4990-4999/5000");
    r = emu::parse_byte_range("bytes=-9000", 5000);
    EXPECT_EQ(emu::content_range(r, 5000), "bytes 0-4999/5000");
}

TEST(EmulatorRange, UnsatisfiableRangesSayWhy) {
    for (const char* h : {"bytes=5000-", "bytes=99999999-", "bytes=5000-5000", "bytes=-0", "bytes=10-5", "bytes=x-",
                          "bytes=1-2x", "bytes=", "bytes=--1", "bytes=99999999999999999999999-"}) {
        auto r = emu::parse_byte_range(h, 5000);
        EXPECT_EQ(r.kind, Kind::Unsatisfiable) << h;
        EXPECT_FALSE(r.problem.empty()) << h;
        EXPECT_EQ(emu::content_range(r, 5000), "bytes */5000") << h;
    }
    EXPECT_EQ(emu::parse_byte_range("bytes=5000-", 5000).problem,
              "the range '5000-' starts at or past the end of the 5000-byte archive");
    EXPECT_EQ(emu::parse_byte_range("bytes=10-5", 5000).problem, "the range '10-5' ends before it starts");
    EXPECT_EQ(emu::parse_byte_range("bytes=0-", 0).kind, Kind::Unsatisfiable);
}

TEST(EmulatorRange, OtherUnitsAndSeveralRangesAreIgnored) {
    EXPECT_EQ(emu::parse_byte_range("", 5000).kind, Kind::Whole);
    EXPECT_EQ(emu::parse_byte_range("items=0-1", 5000).kind, Kind::Whole);
    EXPECT_EQ(emu::parse_byte_range("bytes=0-1,5-6", 5000).kind, Kind::Whole);
    EXPECT_EQ(emu::parse_byte_range("nonsense", 5000).kind, Kind::Whole);
}

TEST(EmulatorRange, IfRangeMatchesTheStrongEtagOnly) {
    const std::string etag = "\"1f2e3d-0a1b2c3d\"";
    EXPECT_TRUE(emu::if_range_matches(etag, etag));
    EXPECT_TRUE(emu::if_range_matches(" " + etag + " ", etag));
    for (const char* v : {"\"1f2e3d-0a1b2c3e\"",          // another tag
                          "W/\"1f2e3d-0a1b2c3d\"",        // weak: never a strong match
                          "1f2e3d-0a1b2c3d",              // unquoted: malformed
                          "\"\"", "\"", "",
                          "Wed, 25 Nov 2026 19:46:06 GMT"}) {  // a date: no Last-Modified to match
        EXPECT_FALSE(emu::if_range_matches(v, etag)) << v;
    }
}
