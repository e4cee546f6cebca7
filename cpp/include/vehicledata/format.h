// Small formatting helpers shared by the emulator and the client: JSON string
// escaping, decimal rendering, URL percent-encoding and query strings, and US
// Eastern time.  Pure functions without global state: call them from any thread.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vehicledata::format {

// ---- JSON ---------------------------------------------------------------------
// How strings are escaped.  Php reproduces the live service's encoder: "/" as
// "\/" and "&" as "\u0026" (besides the mandatory escapes).  Plain escapes only
// what JSON requires.  Both keep non-ASCII UTF-8 bytes as they are.
enum class JsonEscape { Plain, Php };

// Appends s as a JSON string literal, quotes included.  Well-formed UTF-8 is
// kept as is; each ill-formed sequence (a stray byte, a truncated sequence, an
// overlong form, a surrogate, a code point above U+10FFFF) becomes one U+FFFD
// per maximal subpart, so the output is always valid UTF-8 JSON.
void append_json_string(std::string& out, std::string_view s, JsonEscape mode = JsonEscape::Php);
// s with every ill-formed UTF-8 sequence replaced by U+FFFD, as above (for
// text/plain bodies that may echo request bytes).
std::string valid_utf8(std::string_view s);
// Offset of the first byte that does not start a well-formed UTF-8 sequence, or
// std::string_view::npos when all of s is well-formed.
std::size_t invalid_utf8_at(std::string_view s);
// Appends a JSON integer.
void append_int(std::string& out, std::int64_t v);

// `s` without leading and trailing spaces and tabs (HTTP optional whitespace, SQL-ish text).
std::string_view trim_blanks(std::string_view s);
// Appends v rounded half away from zero to `scale` digits after the point
// ("2.0", "192.10"), no quotes.  scale 0 renders an integer.  Non-finite values
// render as "0".
void append_decimal(std::string& out, double v, int scale);
std::string decimal_string(double v, int scale);
// Appends the shortest text that reads back as v (JSON number).
void append_double(std::string& out, double v);

// ---- URLs -----------------------------------------------------------------------
// Percent-decodes `in`; '+' becomes a space when plus_is_space.  Returns false
// (out unspecified) on a malformed escape ("%", "%4", "%zz").
bool url_decode(std::string_view in, std::string& out, bool plus_is_space);
// Form-style encoding as PHP's urlencode: A-Z a-z 0-9 - _ . stay, space is
// '+', every other byte is %XX (upper-case hex).
void append_form_encoded(std::string& out, std::string_view s);
// RFC 3986 encoding: unreserved characters stay, space is %20.
std::string url_encode(std::string_view s);

struct QueryParam {
    std::string name;   // decoded
    std::string value;  // decoded ("" for a bare name)
};

class QueryStringError : public std::invalid_argument {
public:
    explicit QueryStringError(const std::string& message) : std::invalid_argument(message), message(message) {}
    std::string message;  // whole: what() stops at a NUL byte that a decoded name may hold
};

// Parses "a=1&b=x+y" in order (empty pieces skipped).  Throws QueryStringError
// naming the parameter whose percent-encoding is malformed.
std::vector<QueryParam> parse_query(std::string_view query);

// ---- time -------------------------------------------------------------------------
// Days since 1970-01-01 of a proleptic Gregorian date, and back.
std::int64_t days_from_civil(int y, unsigned m, unsigned d);
void civil_from_days(std::int64_t days, int& y, unsigned& m, unsigned& d);

// UTC offset in seconds of America/New_York at a UTC instant, by the US rules
// since 1967 (-14400 in daylight time, -18000 otherwise).
int eastern_offset_seconds(std::int64_t utc_epoch);
// "YYYY-MM-DD HH:MM:SS" in US Eastern local time (no zone).
std::string eastern_datetime(std::int64_t utc_epoch);
// "YYYY-MM-DDTHH:MM:SS-04:00" (US Eastern, with its offset).
std::string eastern_iso8601(std::int64_t utc_epoch);
// "YYYY-MM-DD" of the instant in fixed UTC-5 (the service's usage days).
std::string utc_minus5_date(std::int64_t utc_epoch);
// "YYYY-MM-DD" of a day number.
std::string date_string(std::int64_t days);
// Parses "YYYY-MM-DD HH:MM:SS" as a UTC-naive wall time to seconds since the
// epoch of that wall time; returns false if malformed.
bool parse_datetime(std::string_view text, std::int64_t& wall_epoch);

}  // namespace vehicledata::format
