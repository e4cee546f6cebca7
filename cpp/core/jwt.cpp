// JWT (HS256): base64url, HMAC-SHA256 (OpenSSL libcrypto), sign and verify.
#include "vehicledata/jwt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <simdjson.h>

#include <array>
#include <cmath>
#include <utility>

namespace vehicledata::jwt {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::string_view kHeader = R"({"typ":"JWT","alg":"HS256"})";

int decode_char(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

struct Parts {
    std::string_view header, payload, signature;
};

// Exactly three dot-separated parts; header and payload non-empty.
std::optional<Parts> split(std::string_view token) {
    auto a = token.find('.');
    if (a == std::string_view::npos) return std::nullopt;
    auto b = token.find('.', a + 1);
    if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) return std::nullopt;
    Parts p{token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1)};
    if (p.header.empty() || p.payload.empty()) return std::nullopt;
    return p;
}

// A JSON object, parsed with simdjson On-Demand.  Fills alg (if asked) and
// exp; returns false when the text is not a JSON object or a wanted member
// has the wrong type.
struct Claims {
    std::optional<std::string> alg;
    std::optional<std::int64_t> exp;
    bool exp_present = false;
};

bool read_object(std::string_view json, Claims& out) {
    // The DOM parser validates the whole text (syntax, UTF-8, trailing content).
    static thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(json.data(), json.size()).get(root)) return false;
    simdjson::dom::object obj;
    if (root.get_object().get(obj)) return false;
    for (auto [key, value] : obj) {
        if (key == "alg") {
            std::string_view s;
            if (value.get_string().get(s)) return false;
            out.alg = std::string(s);
        } else if (key == "exp") {
            out.exp_present = true;
            std::int64_t i = 0;
            double d = 0;
            if (!value.get_int64().get(i)) {
                out.exp = i;
            } else if (!value.get_double().get(d) && std::isfinite(d) && d > -9.2e18 && d < 9.2e18) {
                out.exp = static_cast<std::int64_t>(std::floor(d));  // NumericDate may have a fraction
            } else {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (; i + 3 <= bytes.size(); i += 3) {
        std::uint32_t v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        std::uint32_t v = p[i] << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
    } else if (rest == 2) {
        std::uint32_t v = (p[i] << 16) | (p[i + 1] << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
    }
    return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
    if (text.size() % 4 == 1) return std::nullopt;
    std::string out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        int d = decode_char(c);
        if (d < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return out;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int len = 0;
    // A zero-length key must still be a valid pointer for OpenSSL.
    static const unsigned char empty = 0;
    const void* k = key.empty() ? static_cast<const void*>(&empty) : key.data();
    HMAC(EVP_sha256(), k, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
         data.size(), mac.data(), &len);
    return std::string(reinterpret_cast<const char*>(mac.data()), len);
}

std::string sign_hs256(std::string_view payload_json, std::string_view secret) {
    std::string input = base64url_encode(kHeader) + "." + base64url_encode(payload_json);
    std::string sig = base64url_encode(hmac_sha256(secret, input));
    return input + "." + sig;
}

VerifyResult verify_hs256(std::string_view token, std::string_view secret, std::int64_t now_epoch,
                          std::string* payload_json) {
    auto parts = split(token);
    if (!parts) return VerifyResult::Malformed;
    auto header = base64url_decode(parts->header);
    if (!header) return VerifyResult::Malformed;
    Claims h;
    if (!read_object(*header, h)) return VerifyResult::Malformed;
    if (!h.alg || *h.alg != "HS256") return VerifyResult::BadAlgorithm;

    auto sig = base64url_decode(parts->signature);
    if (!sig) return VerifyResult::Malformed;
    std::string_view input = token.substr(0, parts->header.size() + 1 + parts->payload.size());
    std::string expected = hmac_sha256(secret, input);
    if (sig->size() != expected.size() || CRYPTO_memcmp(sig->data(), expected.data(), expected.size()) != 0)
        return VerifyResult::BadSignature;

    auto payload = base64url_decode(parts->payload);
    if (!payload) return VerifyResult::Malformed;
    Claims c;
    if (!read_object(*payload, c)) return VerifyResult::Malformed;
    if (c.exp && now_epoch >= *c.exp) return VerifyResult::Expired;
    if (payload_json) *payload_json = std::move(*payload);
    return VerifyResult::Ok;
}

namespace {
// The decoded payload text and its claims, without verifying the signature.
std::optional<std::pair<std::string, Claims>> read_unverified(std::string_view token) {
    auto parts = split(token);
    if (!parts) return std::nullopt;
    auto payload = base64url_decode(parts->payload);
    if (!payload) return std::nullopt;
    Claims c;
    if (!read_object(*payload, c)) return std::nullopt;
    return std::make_pair(std::move(*payload), c);
}
}  // namespace

std::optional<std::string> payload_unverified(std::string_view token) {
    auto got = read_unverified(token);
    if (!got) return std::nullopt;
    return std::move(got->first);
}

std::optional<std::int64_t> expiry_unverified(std::string_view token) {
    auto got = read_unverified(token);
    if (!got) return std::nullopt;
    return got->second.exp;
}

bool well_formed(std::string_view token) {
    if (token.empty() || token.size() > 8192) return false;
    int dots = 0;
    std::size_t segment = 0;
    for (char ch : token) {
        if (ch == '.') {
            if (segment == 0) return false;
            ++dots;
            segment = 0;
            continue;
        }
        bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
        if (!ok) return false;
        ++segment;
    }
    return dots == 2 && segment > 0;
}

}  // namespace vehicledata::jwt
