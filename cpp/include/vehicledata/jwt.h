// JWT (HS256) helpers shared by the emulator (sign, verify) and the client
// (read claims such as exp without verifying).  Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vehicledata::jwt {

std::string base64url_encode(std::string_view bytes);
// Returns nullopt on characters outside the base64url alphabet.
std::optional<std::string> base64url_decode(std::string_view text);

// HMAC-SHA256 of data with key, raw 32 bytes.
std::string hmac_sha256(std::string_view key, std::string_view data);

// header.payload.signature with header {"typ":"JWT","alg":"HS256"}; payload is
// the JSON text of the claims, passed as is.
std::string sign_hs256(std::string_view payload_json, std::string_view secret);

enum class VerifyResult { Ok, Malformed, BadAlgorithm, BadSignature, Expired };

// Verifies structure, alg == HS256 (rejects "none" and others), signature
// (constant-time compare) and exp against now_epoch.  On Ok, payload_json
// receives the decoded claims text.
VerifyResult verify_hs256(std::string_view token, std::string_view secret, std::int64_t now_epoch,
                          std::string* payload_json = nullptr);

// True when `token` has the shape of a compact JWS: three non-empty base64url
// segments joined by two dots, at most 8 KiB (nothing that could end an HTTP
// header line or inject another one).
bool well_formed(std::string_view token);

// Decoded payload JSON text without verifying (client side), nullopt if malformed.
std::optional<std::string> payload_unverified(std::string_view token);
// The integer `exp` claim without verifying, nullopt if absent or malformed.
std::optional<std::int64_t> expiry_unverified(std::string_view token);

}  // namespace vehicledata::jwt
