// Formatting helpers (see format.h).
#include "vehicledata/format.h"

#include "vehicledata/charconv.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace vehicledata::format {

namespace {
constexpr char kHex[] = "0123456789ABCDEF";
constexpr char kHexLower[] = "0123456789abcdef";

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The UTF-8 sequence starting at p[i] (p[i] >= 0x80): returns its length when
// it is well-formed (RFC 3629: no overlongs, surrogates or code points above
// U+10FFFF), else 0 with `bad` set to the length of its maximal subpart (the
// bytes one U+FFFD replaces, as the Unicode Standard recommends, chapter 3.9).
std::size_t utf8_sequence(const unsigned char* p, std::size_t i, std::size_t n, std::size_t& bad) {
    const unsigned char c = p[i];
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) { len = 3; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) { len = 3; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) { len = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) { len = 4; hi = 0x8F; }
    else { bad = 1; return 0; }
    std::size_t k = 1;
    for (; k < len && i + k < n; ++k) {
        const unsigned char b = p[i + k];
        if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) break;
    }
    if (k == len) return len;
    bad = k;
    return 0;
}

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

void append_2(std::string& out, unsigned v) {
    out.push_back(static_cast<char>('0' + v / 10 % 10));
    out.push_back(static_cast<char>('0' + v % 10));
}
}  // namespace

// ---- JSON ------------------------------------------------------------------------
void append_json_string(std::string& out, std::string_view s, JsonEscape mode) {
    out.push_back('"');
    const bool php = mode == JsonEscape::Php;
    std::size_t run = 0;  // start of the pending run of plain bytes
    const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = bytes[i];
        if (c >= 0x80) {
            std::size_t bad = 0;
            const std::size_t len = utf8_sequence(bytes, i, s.size(), bad);
            if (len) {
                i += len - 1;  // well-formed: stays in the plain run
                continue;
            }
            out.append(s.data() + run, i - run);
            out.append(kReplacement, 3);
            i += bad - 1;
            run = i + 1;
            continue;
        }
        const bool special = c < 0x20 || c == '"' || c == '\\' || (php && (c == '/' || c == '&'));
        if (!special) continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
            case '"': out.append("\\\""); break;
            case '\\': out.append("\\\\"); break;
            case '/': out.append("\\/"); break;
            case '\n': out.append("\\n"); break;
            case '\r': out.append("\\r"); break;
            case '\t': out.append("\\t"); break;
            case '\b': out.append("\\b"); break;
            case '\f': out.append("\\f"); break;
            default:
                out.append("\\u00");
                out.push_back(kHexLower[c >> 4]);
                out.push_back(kHexLower[c & 15]);
        }
    }
    out.append(s.data() + run, s.size() - run);
    out.push_back('"');
}

std::string valid_utf8(std::string_view s) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
    std::string out;
    out.reserve(s.size());
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (bytes[i] < 0x80) continue;
        std::size_t bad = 0;
        const std::size_t len = utf8_sequence(bytes, i, s.size(), bad);
        if (len) {
            i += len - 1;
            continue;
        }
        out.append(s.data() + run, i - run);
        out.append(kReplacement, 3);
        i += bad - 1;
        run = i + 1;
    }
    out.append(s.data() + run, s.size() - run);
    return out;
}

std::size_t invalid_utf8_at(std::string_view s) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (bytes[i] < 0x80) continue;
        std::size_t bad = 0;
        const std::size_t len = utf8_sequence(bytes, i, s.size(), bad);
        if (!len) return i;
        i += len - 1;
    }
    return std::string_view::npos;
}

std::string_view trim_blanks(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

void append_int(std::string& out, std::int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

void append_decimal(std::string& out, double v, int scale) {
    if (!std::isfinite(v)) v = 0;
    if (scale < 0) scale = 0;
    if (scale > 9 || std::fabs(v) >= 1e15) {
        char buf[64];
        int n = std::snprintf(buf, sizeof buf, "%.*f", scale, v);
        out.append(buf, static_cast<std::size_t>(n));
        return;
    }
    static constexpr std::int64_t kPow[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                            1000000000};
    const std::int64_t p = kPow[scale];
    // Round half away from zero; the small epsilon absorbs binary noise such as 2.05 -> 2.0499999.
    const double scaled = std::fabs(v) * static_cast<double>(p);
    std::int64_t n = static_cast<std::int64_t>(std::floor(scaled + 0.5 + 1e-9 * (scaled < 1 ? 1 : scaled)));
    if (v < 0 && n != 0) out.push_back('-');
    append_int(out, n / p);
    if (scale == 0) return;
    out.push_back('.');
    std::int64_t frac = n % p;
    char digits[16];
    for (int i = scale - 1; i >= 0; --i) {
        digits[i] = static_cast<char>('0' + frac % 10);
        frac /= 10;
    }
    out.append(digits, static_cast<std::size_t>(scale));
}

std::string decimal_string(double v, int scale) {
    std::string s;
    append_decimal(s, v, scale);
    return s;
}

void append_double(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out.append("null");
        return;
    }
    char buf[32];
    auto r = charconv::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

// ---- URLs ----------------------------------------------------------------------------
bool url_decode(std::string_view in, std::string& out, bool plus_is_space) {
    out.clear();
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            if (i + 2 >= in.size()) return false;
            int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
            if (hi < 0 || lo < 0) return false;
            out.push_back(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return true;
}

void append_form_encoded(std::string& out, std::string_view s) {
    for (unsigned char c : s) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.') {
            out.push_back(static_cast<char>(c));
        } else if (c == ' ') {
            out.push_back('+');
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        }
    }
}

std::string url_encode(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~') {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        }
    }
    return out;
}

std::vector<QueryParam> parse_query(std::string_view query) {
    std::vector<QueryParam> out;
    std::size_t pos = 0;
    while (pos <= query.size()) {
        std::size_t amp = query.find('&', pos);
        if (amp == std::string_view::npos) amp = query.size();
        std::string_view piece = query.substr(pos, amp - pos);
        pos = amp + 1;
        if (piece.empty()) continue;
        std::size_t eq = piece.find('=');
        std::string_view raw_name = piece.substr(0, eq);
        std::string_view raw_value = eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1);
        QueryParam p;
        if (!url_decode(raw_name, p.name, true))
            throw QueryStringError("malformed percent-encoding in query parameter name '" + std::string(raw_name) + "'");
        if (!url_decode(raw_value, p.value, true))
            throw QueryStringError("malformed percent-encoding in the value of query parameter '" + p.name + "'");
        out.push_back(std::move(p));
    }
    return out;
}

// ---- time -----------------------------------------------------------------------------
// Howard Hinnant's public-domain civil calendar algorithms.
std::int64_t days_from_civil(int y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, int& y, unsigned& m, unsigned& d) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t yy = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = static_cast<int>(yy + (m <= 2));
}

namespace {
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Day number of the n-th (1-based) Sunday of a month; n = 0 means the last one.
std::int64_t nth_sunday(int y, unsigned m, int n) {
    if (n == 0) {
        unsigned nm = m == 12 ? 1 : m + 1;
        int ny = m == 12 ? y + 1 : y;
        std::int64_t last = days_from_civil(ny, nm, 1) - 1;
        std::int64_t wd = (last + 4) % 7;  // 1970-01-01 was a Thursday (4); 0 = Sunday
        if (wd < 0) wd += 7;
        return last - wd;
    }
    std::int64_t first = days_from_civil(y, m, 1);
    std::int64_t wd = (first + 4) % 7;
    if (wd < 0) wd += 7;
    std::int64_t first_sunday = first + (7 - wd) % 7;
    return first_sunday + 7 * (n - 1);
}

void append_wall(std::string& out, std::int64_t wall, char sep) {
    std::int64_t days = floor_div(wall, 86400);
    std::int64_t secs = wall - days * 86400;
    int y;
    unsigned m, d;
    civil_from_days(days, y, m, d);
    char buf[32];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02u%c%02u:%02u:%02u", y, m, d, sep,
                          static_cast<unsigned>(secs / 3600), static_cast<unsigned>(secs / 60 % 60),
                          static_cast<unsigned>(secs % 60));
    out.append(buf, static_cast<std::size_t>(n));
}
}  // namespace

int eastern_offset_seconds(std::int64_t utc) {
    int y;
    unsigned m, d;
    civil_from_days(floor_div(utc, 86400), y, m, d);
    std::int64_t start, end;  // day numbers of the transitions
    if (y >= 2007) {
        start = nth_sunday(y, 3, 2);
        end = nth_sunday(y, 11, 1);
    } else if (y >= 1987) {
        start = nth_sunday(y, 4, 1);
        end = nth_sunday(y, 10, 0);
    } else if (y >= 1967) {
        start = nth_sunday(y, 4, 0);
        end = nth_sunday(y, 10, 0);
    } else {
        return -18000;
    }
    // 02:00 local standard time = 07:00 UTC; 02:00 local daylight time = 06:00 UTC.
    const std::int64_t dst_from = start * 86400 + 7 * 3600;
    const std::int64_t dst_to = end * 86400 + 6 * 3600;
    return (utc >= dst_from && utc < dst_to) ? -14400 : -18000;
}

std::string eastern_datetime(std::int64_t utc) {
    std::string out;
    append_wall(out, utc + eastern_offset_seconds(utc), ' ');
    return out;
}

std::string eastern_iso8601(std::int64_t utc) {
    std::string out;
    const int off = eastern_offset_seconds(utc);
    append_wall(out, utc + off, 'T');
    out.append(off == -14400 ? "-04:00" : "-05:00");
    return out;
}

std::string date_string(std::int64_t days) {
    int y;
    unsigned m, d;
    civil_from_days(days, y, m, d);
    char buf[16];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", y, m, d);
    return std::string(buf, static_cast<std::size_t>(n));
}

std::string utc_minus5_date(std::int64_t utc) { return date_string(floor_div(utc - 18000, 86400)); }

bool parse_datetime(std::string_view t, std::int64_t& wall) {
    if (t.size() != 19 || t[4] != '-' || t[7] != '-' || (t[10] != ' ' && t[10] != 'T') || t[13] != ':' ||
        t[16] != ':')
        return false;
    auto num = [&](std::size_t at, std::size_t len, int& v) {
        auto r = std::from_chars(t.data() + at, t.data() + at + len, v);
        return r.ec == std::errc() && r.ptr == t.data() + at + len;
    };
    int y, mo, d, h, mi, s;
    if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, s))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
    wall = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + s;
    return true;
}

}  // namespace vehicledata::format
