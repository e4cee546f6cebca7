// Retry policy, Retry-After parsing, token bucket, JWT claims and error bodies.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

#include "vehicledata/envelope.h"
#include "vehicledata/format.h"
#include "vehicledata/client/client.h"
#include "vehicledata/client/jwt_cache.h"
#include "vehicledata/client/retry.h"
#include "vehicledata/client/token_bucket.h"
#include "vehicledata/client/transport.h"
#include "vehicledata/jwt.h"

namespace vc = vehicledata::client;
namespace ve = vehicledata::envelope;

TEST(ClientRetry, ExponentialBackoffCapped) {
    vc::RetryPolicy p;
    p.backoff_factor = 0.5;
    p.backoff_max = 3;
    EXPECT_DOUBLE_EQ(vc::backoff_seconds(p, 1), 0.5);
    EXPECT_DOUBLE_EQ(vc::backoff_seconds(p, 2), 1.0);
    EXPECT_DOUBLE_EQ(vc::backoff_seconds(p, 3), 2.0);
    EXPECT_DOUBLE_EQ(vc::backoff_seconds(p, 4), 3.0);
    EXPECT_DOUBLE_EQ(vc::backoff_seconds(p, 0), 0.0);
}

TEST(ClientRetry, RetryAfterSecondsAndDates) {
    EXPECT_EQ(vc::parse_retry_after("30", 0), 30.0);
    EXPECT_EQ(vc::parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 10), 10.0);
    EXPECT_EQ(vc::parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 10), 0.0);
    EXPECT_FALSE(vc::parse_retry_after("later", 0).has_value());
    EXPECT_FALSE(vc::parse_retry_after("-5", 0).has_value());
    EXPECT_EQ(vc::parse_http_date("Sun Nov  6 08:49:37 1994"), 784111777);
}

TEST(ClientTokenBucket, SpacesRequestsAtTheRate) {
    vc::TokenBucket off(0);
    EXPECT_FALSE(off.enabled());
    EXPECT_EQ(off.reserve(), 0.0);
    vc::TokenBucket b(600, 1, 0.0);  // 10 per second, no burst
    EXPECT_EQ(b.reserve(), 0.0);
    double w1 = b.reserve();
    double w2 = b.reserve();
    EXPECT_GT(w1, 0.05);
    EXPECT_LE(w1, 0.1);
    EXPECT_GT(w2, w1 + 0.05);  // reservations queue up behind each other
    b.refund();
    EXPECT_LT(b.reserve(), w2 + 1e-3);
}

TEST(ClientTokenBucket, BurstIsAShareOfTheBudget) {
    vc::TokenBucket b(600, -1, 0.0);  // default: a tenth of 600/min up front
    EXPECT_EQ(b.capacity(), 60.0);
    for (int i = 0; i < 60; ++i) EXPECT_EQ(b.reserve(), 0.0) << i;
    // The 61st waits for the refill of (600 - 59) per minute: 60 at once plus 541 over the
    // following minute keeps every 60-second window at the budget.
    double w = b.reserve();
    EXPECT_GT(w, 0.1);
    EXPECT_LE(w, 60.0 / 541 + 1e-3);
    vc::TokenBucket capped(20, 100, 0.0);  // never more than half the budget at once
    EXPECT_EQ(capped.capacity(), 10.0);
}

TEST(ClientJwt, ClaimsAndSingleLogin) {
    std::string token = vehicledata::jwt::sign_hs256(R"({"exp":4102444800,"iat":4101840000})", "k");
    std::int64_t exp = 0, iat = 0;
    ASSERT_TRUE(vc::jwt_times(token, exp, iat));
    EXPECT_EQ(exp, 4102444800);
    EXPECT_EQ(iat, 4101840000);
    EXPECT_FALSE(vc::jwt_times("not.a.jwt", exp, iat));
    vc::JwtCache cache;
    int calls = 0;
    auto login = [&] {
        ++calls;
        return token;
    };
    EXPECT_EQ(cache.token(login), token);
    EXPECT_EQ(cache.token(login), token);
    EXPECT_EQ(calls, 1);
    cache.invalidate("some other token");
    EXPECT_EQ(cache.token(login), token);
    EXPECT_EQ(calls, 1);
    cache.invalidate(token);
    EXPECT_EQ(cache.token(login), token);
    EXPECT_EQ(calls, 2);
}

TEST(ClientJwt, ExpiredTokenIsRenewed) {
    std::string old_token = vehicledata::jwt::sign_hs256(R"({"exp":1000,"iat":0})", "k");
    std::string fresh = vehicledata::jwt::sign_hs256(R"({"exp":4102444800,"iat":4101840000})", "k");
    vc::JwtCache cache;
    int calls = 0;
    EXPECT_EQ(cache.token([&] { ++calls; return old_token; }), old_token);
    EXPECT_EQ(cache.token([&] { ++calls; return fresh; }), fresh);  // old one already expired
    EXPECT_EQ(calls, 2);
}

TEST(ClientErrors, ErrorBodies) {
    auto e = ve::read_error(R"({"exception":"BadRequestException","code":400,"url":"\/x","message":"bad year"})",
                            "application/json");
    EXPECT_EQ(e.exception, "BadRequestException");
    EXPECT_EQ(e.message, "bad year");
    auto t = ve::read_error("TooManyRequestsException - Max Per Minute: 20\n", "text/plain");
    EXPECT_EQ(t.exception, "TooManyRequestsException");
    EXPECT_EQ(t.message, "TooManyRequestsException - Max Per Minute: 20");
    auto plain = ve::read_error("Unauthorized", "text/plain");
    EXPECT_EQ(plain.exception, "");
    EXPECT_EQ(plain.message, "Unauthorized");
}

TEST(ClientTransport, LoopbackDetection) {
    EXPECT_TRUE(vc::is_loopback_url("http://127.0.0.1:8080/api"));
    EXPECT_TRUE(vc::is_loopback_url("http://localhost/api"));
    EXPECT_TRUE(vc::is_loopback_url("http://[::1]:9/x"));
    EXPECT_TRUE(vc::is_loopback_url("http://user:pw@127.0.0.2/x"));
    EXPECT_FALSE(vc::is_loopback_url("https://carapi.app/api/trims/v2"));
    EXPECT_FALSE(vc::is_loopback_url("http://127.example.com/"));
}

TEST(ClientErrors, InvalidUtf8InErrorBodiesIsReplaced) {
    // Error bodies go through format::valid_utf8: one U+FFFD per maximal subpart.
    EXPECT_EQ(vehicledata::format::valid_utf8("ok \xc3\xa9"), "ok \xc3\xa9");
    EXPECT_EQ(vehicledata::format::valid_utf8("a\xff" "b\xe2\x82"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    EXPECT_EQ(vehicledata::format::valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
    auto e = ve::read_error("{\"exception\":\"BadRequestException\",\"code\":400,\"url\":\"/x\","
                            "\"message\":\"Invalid VIN '\xff\xfe'\"}",
                            "application/json");
    EXPECT_EQ(e.exception, "BadRequestException");
    EXPECT_EQ(e.message, "Invalid VIN '\xef\xbf\xbd\xef\xbf\xbd'");
}

TEST(ClientJwt, DiskTokenNeedsOneCheck) {
    std::string token = vehicledata::jwt::sign_hs256(R"({"exp":4102444800,"iat":4101840000})", "k");
    // The disk cache is used only in a private directory (a shared /tmp is refused).
    std::string dir = ::testing::TempDir() + "vd_jwt_XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    std::string path = dir + "/check_test.jwt";
    {
        vc::JwtCache writer(path);
        EXPECT_EQ(writer.token([&] { return token; }), token);
        EXPECT_FALSE(writer.needs_check(token));  // obtained by a login of this process
    }
    vc::JwtCache reader(path);
    int calls = 0;
    EXPECT_EQ(reader.token([&] { ++calls; return std::string("x"); }), token);
    EXPECT_EQ(calls, 0);
    EXPECT_TRUE(reader.needs_check(token));
    EXPECT_FALSE(reader.needs_check("another token"));
    reader.checked(token);
    EXPECT_FALSE(reader.needs_check(token));
    vc::JwtCache rejected(path);
    EXPECT_TRUE(rejected.needs_check(token));
    rejected.invalidate(token);
    EXPECT_FALSE(rejected.needs_check(token));
    EXPECT_FALSE(rejected.has_token());
    std::remove(path.c_str());
    std::remove((path + ".lock").c_str());
    ::rmdir(dir.c_str());
}

TEST(ClientJwt, SharedDirectoryIsNotUsed) {
    std::string token = vehicledata::jwt::sign_hs256(R"({"exp":4102444800,"iat":4101840000})", "k");
    struct stat sb;
    if (::stat(::testing::TempDir().c_str(), &sb) != 0 || (sb.st_mode & 022) == 0) GTEST_SKIP() << "TempDir is private";
    std::string path = ::testing::TempDir() + "vd_jwt_shared_test.jwt";  // /tmp: writable by everyone
    vc::JwtCache writer(path);
    EXPECT_EQ(writer.token([&] { return token; }), token);
    std::FILE* f = std::fopen(path.c_str(), "r");
    EXPECT_EQ(f, nullptr);
    if (f) std::fclose(f);
}
