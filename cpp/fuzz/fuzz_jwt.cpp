// libFuzzer target: the JWT reader (cpp/core/jwt.cpp) as the client uses it on
// a login answer or a cache file: shape check, unverified payload and claims,
// and verification against a fixed secret (must never accept a forged token).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vehicledata/client/jwt_cache.h"
#include "vehicledata/jwt.h"

namespace j = vehicledata::jwt;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view token(reinterpret_cast<const char*>(data), size);
    bool shaped = j::well_formed(token);
    for (char ch : token)
        if (shaped && (ch == '\r' || ch == '\n' || ch == ' ' || ch == ':')) std::abort();  // header-safe
    (void)j::payload_unverified(token);
    (void)j::expiry_unverified(token);
    std::int64_t exp = 0, iat = 0;
    (void)vehicledata::client::jwt_times(std::string(token), exp, iat);
    (void)j::base64url_decode(token);
    if (j::verify_hs256(token, "fuzz-secret-not-in-any-input", 1700000000) == j::VerifyResult::Ok) std::abort();
    return 0;
}
