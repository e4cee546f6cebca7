// The `Date` header of every answer (RFC 9110, section 6.6.1: IMF-fixdate, always GMT), and the
// `Allow` header of a 405 (RFC 9110, section 10.2.1: a GET resource allows HEAD too).
//
// Thread safety: http_date keeps a per-thread cache of the last second it formatted.
#pragma once

#include <cstdint>
#include <string>

namespace vehicledata::emulator {

// "Wed, 25 Nov 2026 21:26:06 GMT" for a Unix time in seconds.
const std::string& http_date(std::int64_t unix_seconds);

// The Allow header of a route whose method is `method`: "GET, HEAD" for GET, else the method.
const char* allow_header(const char* method);

}  // namespace vehicledata::emulator
