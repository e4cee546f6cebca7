// JWT helpers: base64url, HMAC-SHA256, sign/verify HS256, unverified claims.
//
// Expected values were computed independently with Python's standard library:
//   base64.urlsafe_b64encode(b).rstrip(b"=")  and  hmac.new(key, data, hashlib.sha256)
// and checked against RFC 4231 (test case 2) and RFC 7515 (appendix A.1).
#include <gtest/gtest.h>

#include <string>

#include "vehicledata/jwt.h"

namespace jwt = vehicledata::jwt;

namespace {

std::string hex(const std::string& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string from_hex(const std::string& h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}

// RFC 7515 A.1: the signing input and the HMAC key (JWK "k", base64url-decoded).
const std::string kRfcInput =
    "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
const std::string kRfcKeyB64 = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
const std::string kRfcSig = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

}  // namespace

TEST(Base64Url, EncodesWithoutPadding) {
    EXPECT_EQ(jwt::base64url_encode(""), "");
    EXPECT_EQ(jwt::base64url_encode("f"), "Zg");
    EXPECT_EQ(jwt::base64url_encode("fo"), "Zm8");
    EXPECT_EQ(jwt::base64url_encode("foo"), "Zm9v");
    EXPECT_EQ(jwt::base64url_encode("foob"), "Zm9vYg");
    EXPECT_EQ(jwt::base64url_encode("\xff\xfe\xfd"), "__79");  // '-' and '_' alphabet, not '+' '/'
}

TEST(Base64Url, DecodesAndRejectsForeignCharacters) {
    EXPECT_EQ(jwt::base64url_decode("Zm9vYg"), std::optional<std::string>("foob"));
    EXPECT_EQ(jwt::base64url_decode("__79"), std::optional<std::string>("\xff\xfe\xfd"));
    EXPECT_EQ(jwt::base64url_decode(""), std::optional<std::string>(""));
    EXPECT_EQ(jwt::base64url_decode("Zm9v+A"), std::nullopt);   // '+' is standard base64, not base64url
    EXPECT_EQ(jwt::base64url_decode("Zm9v/A"), std::nullopt);
    EXPECT_EQ(jwt::base64url_decode("Zg=="), std::nullopt);     // no padding in JWTs
    EXPECT_EQ(jwt::base64url_decode("Zm9vY"), std::nullopt);    // 4n+1 characters cannot be valid
    EXPECT_EQ(jwt::base64url_decode("Zm 9v"), std::nullopt);
}

TEST(Base64Url, RoundTripsEveryByte) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n = 0; n <= all.size(); n += 37) {
        std::string part = all.substr(0, n);
        EXPECT_EQ(jwt::base64url_decode(jwt::base64url_encode(part)), std::optional<std::string>(part)) << n;
    }
}

TEST(Hmac, Rfc4231TestCase2) {
    EXPECT_EQ(hex(jwt::hmac_sha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Hmac, Rfc7515AppendixA1) {
    auto key = jwt::base64url_decode(kRfcKeyB64);
    ASSERT_TRUE(key);
    EXPECT_EQ(hex(*key).substr(0, 16), "0323354b2b0fa5bc");
    EXPECT_EQ(jwt::base64url_encode(jwt::hmac_sha256(*key, kRfcInput)), kRfcSig);
}

TEST(Verify, Rfc7515TokenVerifiesUntilItsExpiry) {
    auto key = jwt::base64url_decode(kRfcKeyB64);
    ASSERT_TRUE(key);
    const std::string token = kRfcInput + "." + kRfcSig;
    std::string payload;
    EXPECT_EQ(jwt::verify_hs256(token, *key, 1300819379, &payload), jwt::VerifyResult::Ok);
    EXPECT_EQ(payload, "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}");
    EXPECT_EQ(jwt::verify_hs256(token, *key, 1300819380), jwt::VerifyResult::Expired);  // exp is exclusive
    EXPECT_EQ(jwt::expiry_unverified(token), std::optional<std::int64_t>(1300819380));
}

TEST(Sign, MatchesIndependentlyComputedToken) {
    // Python: h = b64e(b'{"typ":"JWT","alg":"HS256"}'); p = b64e(b'{"sub":"abc","exp":1700000000}')
    //         b64e(hmac.new(b"s3cret", (h + "." + p).encode(), hashlib.sha256).digest())
    const std::string token = jwt::sign_hs256(R"({"sub":"abc","exp":1700000000})", "s3cret");
    EXPECT_EQ(token,
              "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhYmMiLCJleHAiOjE3MDAwMDAwMDB9."
              "4jeJgxeUTtPmeltYavXoHcE6iPhTV1aa_VF4Mtg-J0g");
    std::string payload;
    EXPECT_EQ(jwt::verify_hs256(token, "s3cret", 1699999999, &payload), jwt::VerifyResult::Ok);
    EXPECT_EQ(payload, R"({"sub":"abc","exp":1700000000})");
    EXPECT_EQ(jwt::verify_hs256(token, "s3cret", 1700000000), jwt::VerifyResult::Expired);
    EXPECT_EQ(jwt::verify_hs256(token, "s3cret", 1800000000), jwt::VerifyResult::Expired);
}

TEST(Verify, WrongSecretAndTamperingAreBadSignatures) {
    const std::string token = jwt::sign_hs256(R"({"sub":"abc","exp":1700000000})", "s3cret");
    EXPECT_EQ(jwt::verify_hs256(token, "S3cret", 0), jwt::VerifyResult::BadSignature);
    EXPECT_EQ(jwt::verify_hs256(token, "", 0), jwt::VerifyResult::BadSignature);

    // Payload swapped for a later expiry, signature kept.
    auto dot1 = token.find('.'), dot2 = token.rfind('.');
    std::string forged = token.substr(0, dot1 + 1) + jwt::base64url_encode(R"({"sub":"abc","exp":1900000000})") +
                         token.substr(dot2);
    EXPECT_EQ(jwt::verify_hs256(forged, "s3cret", 0), jwt::VerifyResult::BadSignature);

    // Every single-character change of the signature is caught.
    for (std::size_t i = dot2 + 1; i < token.size(); ++i) {
        std::string t = token;
        t[i] = t[i] == 'A' ? 'B' : 'A';
        auto r = jwt::verify_hs256(t, "s3cret", 0);
        EXPECT_TRUE(r == jwt::VerifyResult::BadSignature || r == jwt::VerifyResult::Malformed) << i;
        EXPECT_NE(r, jwt::VerifyResult::Ok) << i;
    }
    // Truncated signature.
    EXPECT_EQ(jwt::verify_hs256(token.substr(0, token.size() - 4), "s3cret", 0), jwt::VerifyResult::BadSignature);
}

TEST(Verify, AlgorithmNoneAndOthersAreRejected) {
    const std::string payload = jwt::base64url_encode(R"({"sub":"abc","exp":4000000000})");
    const std::string none = jwt::base64url_encode(R"({"typ":"JWT","alg":"none"})") + "." + payload + ".";
    EXPECT_EQ(jwt::verify_hs256(none, "s3cret", 0), jwt::VerifyResult::BadAlgorithm);
    const std::string none_upper = jwt::base64url_encode(R"({"alg":"NONE"})") + "." + payload + ".";
    EXPECT_EQ(jwt::verify_hs256(none_upper, "s3cret", 0), jwt::VerifyResult::BadAlgorithm);
    // HS512 header signed with HS256 bytes: still rejected for its algorithm.
    const std::string h512 = jwt::base64url_encode(R"({"typ":"JWT","alg":"HS512"})") + "." + payload;
    EXPECT_EQ(jwt::verify_hs256(h512 + "." + jwt::base64url_encode(jwt::hmac_sha256("s3cret", h512)), "s3cret", 0),
              jwt::VerifyResult::BadAlgorithm);
    const std::string no_alg = jwt::base64url_encode(R"({"typ":"JWT"})") + "." + payload;
    EXPECT_EQ(jwt::verify_hs256(no_alg + "." + jwt::base64url_encode(jwt::hmac_sha256("s3cret", no_alg)), "s3cret", 0),
              jwt::VerifyResult::BadAlgorithm);
}

TEST(Verify, MalformedTokens) {
    const std::string good = jwt::sign_hs256(R"({"exp":4000000000})", "k");
    for (const std::string& t : {std::string(""), std::string("abc"), std::string("a.b"), std::string("a.b.c.d"),
                                 std::string(".."), std::string("..sig"), good + ".", good.substr(1),
                                 std::string("!!!.e30.sig")}) {
        EXPECT_EQ(jwt::verify_hs256(t, "k", 0), jwt::VerifyResult::Malformed) << t;
    }
    // Header that is not JSON, payload that is not an object (signed properly).
    const std::string bad_header = jwt::base64url_encode("{not json") + "." + jwt::base64url_encode("{}");
    EXPECT_EQ(jwt::verify_hs256(bad_header + "." + jwt::base64url_encode(jwt::hmac_sha256("k", bad_header)), "k", 0),
              jwt::VerifyResult::Malformed);
    const std::string array_payload = jwt::sign_hs256("[1,2]", "k");
    EXPECT_EQ(jwt::verify_hs256(array_payload, "k", 0), jwt::VerifyResult::Malformed);
    const std::string string_exp = jwt::sign_hs256(R"({"exp":"tomorrow"})", "k");
    EXPECT_EQ(jwt::verify_hs256(string_exp, "k", 0), jwt::VerifyResult::Malformed);
    const std::string trailing = jwt::sign_hs256(R"({"exp":1} x)", "k");
    EXPECT_EQ(jwt::verify_hs256(trailing, "k", 0), jwt::VerifyResult::Malformed);
}

TEST(Verify, TokenWithoutExpiryNeverExpires) {
    const std::string token = jwt::sign_hs256(R"({"sub":"abc"})", "k");
    EXPECT_EQ(jwt::verify_hs256(token, "k", 9000000000LL), jwt::VerifyResult::Ok);
    EXPECT_EQ(jwt::expiry_unverified(token), std::nullopt);
}

TEST(Unverified, PayloadAndExpiry) {
    const std::string claims = R"({"iss":"carapi.app","exp":1700604800,"iat":1700000000,"user":{"addons":{"data_feed":true}}})";
    const std::string token = jwt::sign_hs256(claims, "whatever");
    EXPECT_EQ(jwt::payload_unverified(token), std::optional<std::string>(claims));
    EXPECT_EQ(jwt::expiry_unverified(token), std::optional<std::int64_t>(1700604800));
    // Unverified reads ignore the signature.
    EXPECT_EQ(jwt::expiry_unverified(token.substr(0, token.rfind('.') + 1) + "xx"),
              std::optional<std::int64_t>(1700604800));
    // A fractional NumericDate is floored.
    EXPECT_EQ(jwt::expiry_unverified(jwt::sign_hs256(R"({"exp":1700000000.75})", "k")),
              std::optional<std::int64_t>(1700000000));
    EXPECT_EQ(jwt::expiry_unverified("not a token"), std::nullopt);
    EXPECT_EQ(jwt::expiry_unverified("a.%%%.c"), std::nullopt);
    EXPECT_EQ(jwt::payload_unverified(jwt::base64url_encode("{}") + "." + jwt::base64url_encode("nope") + ".x"),
              std::nullopt);
    EXPECT_EQ(jwt::expiry_unverified(jwt::sign_hs256(R"({"exp":"soon"})", "k")), std::nullopt);
}

TEST(Hmac, BinaryKeysAndData) {
    // Python: hmac.new(bytes.fromhex("00ff00"), b"\x00a\x00", hashlib.sha256).hexdigest()
    EXPECT_EQ(hex(jwt::hmac_sha256(from_hex("00ff00"), std::string("\0a\0", 3))),
              "1a390b989cfa6178dd7079b40008980da179f0aa09926fb1ac9488096e20f121");
    // Python: hmac.new(b"", b"", hashlib.sha256).hexdigest()
    EXPECT_EQ(hex(jwt::hmac_sha256("", "")), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

// Issue 13: a login answer or cache file must be a bare compact JWS before it
// goes into an Authorization header.
TEST(JwtShape, WellFormedAcceptsOnlyThreeBase64UrlSegments) {
    EXPECT_TRUE(jwt::well_formed("eyJh.eyJz.c2ln"));
    EXPECT_TRUE(jwt::well_formed("a-_.b.C9"));
    for (const char* bad : {"", "a.b", "a.b.c.d", ".b.c", "a..c", "a.b.", "a.b.c\r\nX-Injected: yes", "a b.c.d",
                            "a.b.c\n", "a.b.c=", "a.b:c.d"})
        EXPECT_FALSE(jwt::well_formed(bad)) << bad;
    EXPECT_FALSE(jwt::well_formed("a.b." + std::string(9000, 'c')));
}
