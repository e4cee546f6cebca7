// The Range header of the data feed download (RFC 9110, section 14).
//
// The emulator answers Range itself (cpp-httplib's own handling, which also
// slices error bodies, is switched off for every request in server.cpp).
// Pure functions: call them from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vehicledata::emulator {

struct ByteRange {
    enum class Kind {
        Whole,          // no usable Range: send the whole representation (200)
        Partial,        // one satisfiable range: 206 with bytes first..last
        Unsatisfiable,  // 416 with "Content-Range: bytes */size"
    };
    Kind kind = Kind::Whole;
    std::size_t first = 0;
    std::size_t last = 0;   // inclusive
    std::string problem;    // Unsatisfiable: why, for the text/plain body
};

// Interprets `header` (the Range value; "" when absent) for a body of `size`
// bytes.  One byte range ("a-b", "a-", "-n"; the unit "bytes" in any case) is
// served; a last position past the end is clamped.  A first position at or past
// the end, a zero suffix, an empty body, "a-b" with b < a or malformed numbers
// are Unsatisfiable.  Another unit, or several ranges, are ignored (Whole), as
// RFC 9110 allows.
ByteRange parse_byte_range(std::string_view header, std::size_t size);

// "bytes first-last/size" / "bytes */size".
std::string content_range(const ByteRange& r, std::size_t size);

// If-Range (RFC 9110, section 13.1.5), evaluated only when the request has a Range: true when
// `if_range` is an entity tag that matches `etag` (the archive's strong ETag, quotes included) by
// the strong comparison. A weak tag (W/"..."), another tag, an HTTP-date (the download sends no
// Last-Modified, so no date can match it) or anything malformed is false: the Range is then
// ignored and the whole archive answered (200).
bool if_range_matches(std::string_view if_range, std::string_view etag);

}  // namespace vehicledata::emulator
