#include <gtest/gtest.h>

#include "vehicledata/format.h"

namespace fmt = vehicledata::format;

TEST(Format, JsonStringPhpEscapesSlashAndAmpersand) {
    std::string out;
    fmt::append_json_string(out, "/api/trims/v2?a=1&b=\"x\"\\\n\x01");
    EXPECT_EQ(out, "\"\\/api\\/trims\\/v2?a=1\\u0026b=\\\"x\\\"\\\\\\n\\u0001\"");
    out.clear();
    fmt::append_json_string(out, "/a&b", fmt::JsonEscape::Plain);
    EXPECT_EQ(out, "\"/a&b\"");
    out.clear();
    fmt::append_json_string(out, "Citro\xc3\xabn", fmt::JsonEscape::Php);
    EXPECT_EQ(out, "\"Citro\xc3\xabn\"");
}

TEST(Format, DecimalsRenderWithScaleAndRounding) {
    EXPECT_EQ(fmt::decimal_string(2.0, 1), "2.0");
    EXPECT_EQ(fmt::decimal_string(192.1, 1), "192.1");
    EXPECT_EQ(fmt::decimal_string(2.05, 1), "2.1");
    EXPECT_EQ(fmt::decimal_string(2.04, 1), "2.0");
    EXPECT_EQ(fmt::decimal_string(-1.25, 1), "-1.3");
    EXPECT_EQ(fmt::decimal_string(-0.04, 1), "0.0");
    EXPECT_EQ(fmt::decimal_string(0.5, 0), "1");
    EXPECT_EQ(fmt::decimal_string(16, 2), "16.00");
    EXPECT_EQ(fmt::decimal_string(1234567.891, 2), "1234567.89");
}

TEST(Format, IntegersAndDoubles) {
    std::string out;
    fmt::append_int(out, -9223372036854775807LL - 1);
    EXPECT_EQ(out, "-9223372036854775808");
    out.clear();
    fmt::append_double(out, 0.1);
    EXPECT_EQ(out, "0.1");
}

TEST(Format, UrlDecodeRejectsMalformedEscapes) {
    std::string out;
    EXPECT_TRUE(fmt::url_decode("Range%20Rover+x", out, true));
    EXPECT_EQ(out, "Range Rover x");
    EXPECT_TRUE(fmt::url_decode("a+b", out, false));
    EXPECT_EQ(out, "a+b");
    EXPECT_FALSE(fmt::url_decode("%", out, true));
    EXPECT_FALSE(fmt::url_decode("%4", out, true));
    EXPECT_FALSE(fmt::url_decode("%zz", out, true));
}

TEST(Format, FormEncodingMatchesPhpUrlencode) {
    std::string out;
    fmt::append_form_encoded(out, "Range Rover/[x]~-_.");
    EXPECT_EQ(out, "Range+Rover%2F%5Bx%5D%7E-_.");
    EXPECT_EQ(fmt::url_encode("a b~"), "a%20b~");
}

TEST(Format, ParseQueryKeepsOrderAndNamesBadParameter) {
    auto ps = fmt::parse_query("limit=10&model=Range%20Rover&&flag&x=a+b");
    ASSERT_EQ(ps.size(), 4u);
    EXPECT_EQ(ps[0].name, "limit");
    EXPECT_EQ(ps[1].value, "Range Rover");
    EXPECT_EQ(ps[2].name, "flag");
    EXPECT_EQ(ps[2].value, "");
    EXPECT_EQ(ps[3].value, "a b");
    try {
        fmt::parse_query("ok=1&year=%G1");
        FAIL() << "no error";
    } catch (const fmt::QueryStringError& e) {
        EXPECT_NE(std::string(e.what()).find("'year'"), std::string::npos) << e.what();
    }
}

TEST(Format, CivilDaysRoundTrip) {
    EXPECT_EQ(fmt::days_from_civil(1970, 1, 1), 0);
    EXPECT_EQ(fmt::days_from_civil(2000, 3, 1), 11017);
    for (std::int64_t d : {-1000000LL, -1LL, 0LL, 59LL, 11016LL, 20000LL, 3000000LL}) {
        int y;
        unsigned m, day;
        fmt::civil_from_days(d, y, m, day);
        EXPECT_EQ(fmt::days_from_civil(y, m, day), d);
    }
}

TEST(Format, EasternTimeFollowsUsDaylightRules) {
    // 2023-06-30 01:01:06 UTC = 2023-06-29 21:01:06 EDT
    EXPECT_EQ(fmt::eastern_iso8601(1688086866), "2023-06-29T21:01:06-04:00");
    // 2023-01-01 17:00:00 UTC = 12:00 EST
    EXPECT_EQ(fmt::eastern_datetime(1672592400), "2023-01-01 12:00:00");
    // DST 2023 starts 2023-03-12 07:00 UTC and ends 2023-11-05 06:00 UTC.
    EXPECT_EQ(fmt::eastern_offset_seconds(1678604399), -18000);
    EXPECT_EQ(fmt::eastern_offset_seconds(1678604400), -14400);
    EXPECT_EQ(fmt::eastern_offset_seconds(1699163999), -14400);
    EXPECT_EQ(fmt::eastern_offset_seconds(1699164000), -18000);
    // 2005 (old rules): first Sunday of April (Apr 3) to last Sunday of October (Oct 30).
    EXPECT_EQ(fmt::eastern_offset_seconds(1112511600 + 3600), -14400);  // 2005-04-03 08:00 UTC
    EXPECT_EQ(fmt::eastern_offset_seconds(1112511600 - 3600), -18000);
}

TEST(Format, UtcMinus5DatesAndParsing) {
    EXPECT_EQ(fmt::utc_minus5_date(1672549200), "2023-01-01");      // 2023-01-01 05:00 UTC
    EXPECT_EQ(fmt::utc_minus5_date(1672549199), "2022-12-31");
    std::int64_t wall = 0;
    ASSERT_TRUE(fmt::parse_datetime("2023-01-01 12:00:00", wall));
    EXPECT_EQ(wall, 1672574400);
    EXPECT_FALSE(fmt::parse_datetime("2023-13-01 12:00:00", wall));
    EXPECT_FALSE(fmt::parse_datetime("2023-01-01", wall));
}

namespace {
std::string json_of(std::string_view s) {
    std::string out;
    fmt::append_json_string(out, s, fmt::JsonEscape::Plain);
    return out;
}
}  // namespace

TEST(Format, JsonStringReplacesIllFormedUtf8WithReplacementCharacter) {
    const std::string r = "\xEF\xBF\xBD";
    EXPECT_EQ(json_of("\xFF"), "\"" + r + "\"");
    EXPECT_EQ(json_of("a\xFF\xFE" "b"), "\"a" + r + r + "b\"");
    EXPECT_EQ(json_of("\xC0\xAF"), "\"" + r + r + "\"");            // overlong '/': two maximal subparts
    EXPECT_EQ(json_of("\xED\xA0\x80"), "\"" + r + r + r + "\"");     // surrogate U+D800
    EXPECT_EQ(json_of("\xF4\x90\x80\x80"), "\"" + r + r + r + r + "\"");  // above U+10FFFF
    EXPECT_EQ(json_of("\xE2\x82" "x"), "\"" + r + "x\"");             // truncated 3-byte sequence: one U+FFFD
    EXPECT_EQ(json_of("x\xF0\x9F\x98"), "\"x" + r + "\"");            // truncated at the end
    EXPECT_EQ(json_of("\x80"), "\"" + r + "\"");                      // lone continuation byte
    // Well-formed sequences of every length stay as they are.
    EXPECT_EQ(json_of("\xC3\xAB\xE2\x82\xAC\xF0\x9F\x98\x80"), "\"\xC3\xAB\xE2\x82\xAC\xF0\x9F\x98\x80\"");
    // Escapes still apply around a replacement.
    std::string php;
    fmt::append_json_string(php, "/\xFF&", fmt::JsonEscape::Php);
    EXPECT_EQ(php, "\"\\/" + r + "\\u0026\"");
}

TEST(Format, ValidUtf8ReplacesOnlyIllFormedSequences) {
    EXPECT_EQ(fmt::valid_utf8("ok \xC3\xAB"), "ok \xC3\xAB");
    EXPECT_EQ(fmt::valid_utf8("a\xFF" "b\xE2\x82"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
    EXPECT_EQ(fmt::valid_utf8(""), "");
}

TEST(Format, TrimBlanksStripsSpacesAndTabsOnly) {
    EXPECT_EQ(fmt::trim_blanks(" \t bytes=0-9 \t"), "bytes=0-9");
    EXPECT_EQ(fmt::trim_blanks("\n x \r"), "\n x \r");
    EXPECT_EQ(fmt::trim_blanks(" \t "), "");
    EXPECT_EQ(fmt::trim_blanks(""), "");
}
