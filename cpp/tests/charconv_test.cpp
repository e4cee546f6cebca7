// vehicledata::charconv: the C-library fallbacks (used where libstdc++ lacks the floating-point
// std::to_chars / std::from_chars, i.e. the Debian 11 wheel builds) give what std gives.
#include "vehicledata/charconv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace cc = vehicledata::charconv;

namespace {

std::string c_text(double v) {
    char buf[64];
    auto r = cc::to_chars_c(buf, buf + sizeof buf, v);
    EXPECT_EQ(r.ec, std::errc());
    return std::string(buf, r.ptr);
}

#if defined(__cpp_lib_to_chars)
std::string std_text(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}
#endif

}  // namespace

TEST(Charconv, ToCharsKnownValues) {
    EXPECT_EQ(c_text(0.0), "0");
    EXPECT_EQ(c_text(-0.0), "-0");
    EXPECT_EQ(c_text(2.0), "2");
    EXPECT_EQ(c_text(0.1), "0.1");
    EXPECT_EQ(c_text(1200.0), "1200");
    EXPECT_EQ(c_text(1e6), "1e+06");
    EXPECT_EQ(c_text(123456.0), "123456");
    EXPECT_EQ(c_text(1e-5), "1e-05");
    EXPECT_EQ(c_text(0.0001), "1e-04");  // shorter than 0.0001
    EXPECT_EQ(c_text(0.001), "0.001");   // a tie goes to the fixed form
    EXPECT_EQ(c_text(-35.25), "-35.25");
    EXPECT_EQ(c_text(1.0 / 3), "0.3333333333333333");
    EXPECT_EQ(c_text(1e300), "1e+300");
    EXPECT_EQ(c_text(858455781350089472.0), "858455781350089472");  // fixed: the exact integer
    EXPECT_EQ(c_text(5e-324), "5e-324");
    EXPECT_EQ(c_text(std::numeric_limits<double>::infinity()), "inf");
}

TEST(Charconv, FromCharsKnownValues) {
    struct Case {
        const char* text;
        std::errc ec;
        std::size_t used;
        double value;
    };
    const Case cases[] = {
        {"2", std::errc(), 1, 2.0},          {"-35.25", std::errc(), 6, -35.25}, {"1e3", std::errc(), 3, 1000.0},
        {"1.5x", std::errc(), 3, 1.5},       {"+1", std::errc::invalid_argument, 0, 0},
        {" 1", std::errc::invalid_argument, 0, 0}, {"abc", std::errc::invalid_argument, 0, 0},
        {"", std::errc::invalid_argument, 0, 0},   {"1e999", std::errc::result_out_of_range, 5, 0},
        {"0x10", std::errc(), 1, 0.0},
    };
    for (const auto& c : cases) {
        double v = 0;
        auto r = cc::from_chars_c(c.text, c.text + std::strlen(c.text), v);
        EXPECT_EQ(r.ec, c.ec) << c.text;
        if (c.ec != std::errc::invalid_argument) EXPECT_EQ(static_cast<std::size_t>(r.ptr - c.text), c.used) << c.text;
        if (c.ec == std::errc()) EXPECT_EQ(v, c.value) << c.text;
    }
}

#if defined(__cpp_lib_to_chars)
TEST(Charconv, FallbackMatchesStdOnRandomDoubles) {
    std::mt19937_64 rng(21);
    std::vector<double> values;
    std::uniform_int_distribution<std::uint64_t> bits;
    std::uniform_real_distribution<double> prices(0, 200000);
    for (int i = 0; i < 20000; ++i) {
        std::uint64_t b = bits(rng);
        double d;
        std::memcpy(&d, &b, sizeof d);
        if (std::isfinite(d)) values.push_back(d);
        values.push_back(std::round(prices(rng) * 100) / 100);  // prices and measures as the catalogue has them
        values.push_back(static_cast<double>(static_cast<std::int64_t>(prices(rng))));
    }
    for (double v : values) {
        std::string mine = c_text(v);
        ASSERT_EQ(mine, std_text(v)) << v;
        double back = 0;
        auto r = cc::from_chars_c(mine.data(), mine.data() + mine.size(), back);
        double expected = 0;
        std::from_chars(mine.data(), mine.data() + mine.size(), expected);
        ASSERT_EQ(r.ec, std::errc()) << mine;
        ASSERT_EQ(back, expected) << mine;
    }
}
#endif
