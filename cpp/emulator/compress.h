// Response compression chosen by the emulator, not by cpp-httplib.
//
// One rule (docs/emulator.md, "Compression"): a JSON or text body longer than
// 1 KiB is compressed with a coding the request offers, gzip preferred, then
// deflate; never brotli (Debian's cpp-httplib would use brotli at quality 11,
// about 0.7 s for a 1000-record page). Every response of a route that can be
// compressed carries `Vary: Accept-Encoding`. Login answers are never
// compressed. Thread-safe (no shared state).
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

namespace vehicledata::emulator {

// Bodies of at most this many bytes are sent uncompressed.
inline constexpr std::size_t kCompressMinBytes = 1024;

enum class Coding { Identity, Gzip, Deflate };

// The coding to use for an Accept-Encoding header value: gzip, else deflate,
// when offered with q > 0 (or through "*"); else identity.
Coding offered_coding(std::string_view accept_encoding);

// `in` compressed with `coding` (gzip or deflate, zlib at its fastest level); false on failure.
bool compress_body(const std::string& in, Coding coding, std::string& out);

// Whether a body of this Content-Type may be compressed (JSON or text).
bool compressible_type(const std::string& content_type);

// The rule itself: the coding for a body of `size` bytes and this Content-Type, given the request's
// Accept-Encoding (identity for small or non-text bodies, or when no coding is offered).
Coding coding_for(std::string_view accept_encoding, const std::string& content_type, std::size_t size);

// Applies the rule to a response about to be sent (in-memory JSON or text
// bodies; streamed bodies such as the feed ZIP keep their bytes), marks JSON
// with a charset, and removes the request's Accept-Encoding so that
// cpp-httplib never compresses on its own.
void compress_response(const httplib::Request& req, httplib::Response& res);

}  // namespace vehicledata::emulator
