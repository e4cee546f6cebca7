// The data feed's Range handling (see range.h).
#include "range.h"

#include <cctype>
#include <charconv>
#include <cstdint>

#include "vehicledata/format.h"

namespace vehicledata::emulator {

namespace {

using format::trim_blanks;

bool parse_pos(std::string_view s, std::uint64_t& v) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

ByteRange unsatisfiable(std::string problem) {
    ByteRange r;
    r.kind = ByteRange::Kind::Unsatisfiable;
    r.problem = std::move(problem);
    return r;
}

}  // namespace

ByteRange parse_byte_range(std::string_view header, std::size_t size) {
    header = trim_blanks(header);
    if (header.empty()) return {};
    const auto eq = header.find('=');
    if (eq == std::string_view::npos) return {};
    std::string unit(trim_blanks(header.substr(0, eq)));
    for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (unit != "bytes") return {};
    const std::string_view set = trim_blanks(header.substr(eq + 1));
    if (set.find(',') != std::string_view::npos) return {};
    const auto dash = set.find('-');
    if (dash == std::string_view::npos) return unsatisfiable("malformed byte range '" + std::string(set) + "'");
    const std::string_view a = trim_blanks(set.substr(0, dash)), b = trim_blanks(set.substr(dash + 1));
    std::uint64_t first = 0, last = 0;
    const std::string total = std::to_string(size);
    ByteRange r;
    r.kind = ByteRange::Kind::Partial;
    if (a.empty()) {  // suffix: the last n bytes
        if (!parse_pos(b, last)) return unsatisfiable("malformed byte range '" + std::string(set) + "'");
        if (last == 0 || size == 0)
            return unsatisfiable("the range '" + std::string(set) + "' selects no byte of the " + total + "-byte archive");
        r.first = last >= size ? 0 : size - static_cast<std::size_t>(last);
        r.last = size - 1;
        return r;
    }
    if (!parse_pos(a, first) || (!b.empty() && !parse_pos(b, last)))
        return unsatisfiable("malformed byte range '" + std::string(set) + "'");
    if (!b.empty() && last < first)
        return unsatisfiable("the range '" + std::string(set) + "' ends before it starts");
    if (first >= size)
        return unsatisfiable("the range '" + std::string(set) + "' starts at or past the end of the " + total +
                             "-byte archive");
    r.first = static_cast<std::size_t>(first);
    r.last = b.empty() || last >= size ? size - 1 : static_cast<std::size_t>(last);
    return r;
}

std::string content_range(const ByteRange& r, std::size_t size) {
    if (r.kind == ByteRange::Kind::Partial)
        return "bytes " + std::to_string(r.first) + "-" + std::to_string(r.last) + "/" + std::to_string(size);
    return "bytes */" + std::to_string(size);
}

bool if_range_matches(std::string_view if_range, std::string_view etag) {
    const std::string_view v = trim_blanks(if_range);
    // an entity tag: '"' opaque characters '"' (a W/ prefix makes it weak: never a strong match)
    return v.size() >= 2 && v.front() == '"' && v.back() == '"' && v == etag;
}

}  // namespace vehicledata::emulator
