// Response compression chosen by the emulator, not by cpp-httplib.
//
// Debian's cpp-httplib compresses any application/json body with brotli at
// quality 11 whenever a client accepts "br" (about 0.7 s for a 1000-record
// page).  The emulator instead gzips at a fast level when the client accepts
// gzip, and otherwise sends the body as is.  Thread-safe (no shared state).
#pragma once

#include <httplib.h>

namespace vehicledata::emulator {

// Bodies shorter than this are sent uncompressed.
inline constexpr std::size_t kCompressMinBytes = 1024;

// For an in-memory JSON or text body: gzip it when the request accepts gzip
// (and the body is large enough), and mark the Content-Type with a charset so
// that cpp-httplib leaves the body alone.  Streamed bodies are untouched.
void compress_response(const httplib::Request& req, httplib::Response& res);

}  // namespace vehicledata::emulator
