// The gate's request framing (request_framing.h).
#include "request_framing.h"

#include <cstring>

namespace vehicledata::emulator {

namespace {

constexpr std::size_t kRequestLineMax = 8192;  // as httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// One line ending at '\n' from `pos`; false if the buffer has no '\n' yet.
bool next_line(const char* d, std::size_t n, std::size_t& pos, std::string_view& line) {
    const void* nl = pos < n ? std::memchr(d + pos, '\n', n - pos) : nullptr;
    if (!nl) return false;
    const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - d);
    line = std::string_view(d + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    return true;
}

RequestScan refuse(RequestScan r, int status, std::string message) {
    r.kind = RequestScan::Refuse;
    r.status = status;
    r.message = std::move(message);
    return r;
}

// Ends of a chunked body from `pos`: Ready with its end, Incomplete, or Refuse.
// `progress` (optional) resumes after the chunks a previous scan of the same buffer read, and
// records where this one stopped.
RequestScan scan_chunked(RequestScan r, const char* d, std::size_t n, std::size_t pos, const GateLimits& limits,
                         ChunkProgress* progress) {
    std::size_t total = 0;
    if (progress && progress->pos > pos && progress->pos <= n) {
        pos = progress->pos;
        total = progress->total;
    }
    for (;;) {
        std::string_view line;
        const std::size_t line_start = pos;
        if (progress) *progress = {line_start, total};
        if (!next_line(d, n, pos, line)) {
            if (n - line_start > 1024) return refuse(r, 400, "Bad Request: malformed chunk size line");
            return r;
        }
        line = line.substr(0, line.find(';'));
        line = trim(line);
        if (line.empty() || line.size() > 8) return refuse(r, 400, "Bad Request: malformed chunk size line");
        std::size_t size = 0;
        for (char c : line) {
            int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (v < 0) return refuse(r, 400, "Bad Request: malformed chunk size line");
            size = size * 16 + static_cast<std::size_t>(v);
        }
        total += size;
        if (total > limits.max_body)
            return refuse(r, 413, "Payload Too Large: the body is over " + std::to_string(limits.max_body) + " bytes");
        if (size == 0) {  // trailer fields, then an empty line
            for (std::size_t fields = 0;; ++fields) {
                if (fields > limits.max_headers) return refuse(r, 431, "Request Header Fields Too Large: too many trailer fields");
                if (!next_line(d, n, pos, line)) return r;
                if (line.empty()) break;
            }
            r.kind = RequestScan::Ready;
            r.length = pos;
            return r;
        }
        if (n < pos + size + 2) return r;
        if (d[pos + size] != '\r' || d[pos + size + 1] != '\n') return refuse(r, 400, "Bad Request: chunk data does not end with CRLF");
        pos += size + 2;
    }
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

RequestScan scan_request(const char* d, std::size_t n, const GateLimits& limits, ChunkProgress* progress) {
    RequestScan r;
    std::size_t pos = 0;
    while (pos < n && (d[pos] == '\r' || d[pos] == '\n') && pos < 64) ++pos;  // RFC 9112 2.2: leading empty lines
    const std::size_t start = pos;
    r.start = start;
    std::string_view line;
    if (!next_line(d, n, pos, line)) {
        if (n - start > kRequestLineMax) return refuse(r, 414, "URI Too Long: the request line is over 8192 bytes");
        return r;
    }
    if (line.size() > kRequestLineMax) return refuse(r, 414, "URI Too Long: the request line is over 8192 bytes");
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 != std::string_view::npos) {
        std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
        if (!target.empty() && target.front() == '/') r.url = std::string(target.substr(0, target.find('?')));
    }
    const bool http11 = sp2 != std::string_view::npos && line.substr(sp2 + 1) == "HTTP/1.1";

    std::size_t fields = 0, hosts = 0, lengths = 0;
    bool chunked = false, has_te = false, expect = false;
    std::string_view te, length;
    for (;;) {
        const std::size_t line_start = pos;
        if (!next_line(d, n, pos, line)) {
            if (n - line_start > 8192 || n > limits.max_header_bytes)
                return refuse(r, 431, "Request Header Fields Too Large: the request head is over " +
                                          std::to_string(limits.max_header_bytes) + " bytes");
            return r;
        }
        if (line.empty()) break;
        if (++fields > limits.max_headers)
            return refuse(r, 431, "Request Header Fields Too Large: more than " + std::to_string(limits.max_headers) +
                                      " header fields");
        if (pos > limits.max_header_bytes)
            return refuse(r, 431, "Request Header Fields Too Large: the request head is over " +
                                      std::to_string(limits.max_header_bytes) + " bytes");
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0 || line[colon - 1] == ' ' || line[colon - 1] == '\t')
            return refuse(r, 400, "Bad Request: malformed header field line");
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = trim(line.substr(colon + 1));
        if (iequals(name, "Host")) {
            ++hosts;
        } else if (iequals(name, "Content-Length")) {
            if (lengths++ > 0 && value != length) return refuse(r, 400, "Bad Request: conflicting Content-Length headers");
            length = value;
        } else if (iequals(name, "Transfer-Encoding")) {
            if (has_te) return refuse(r, 400, "Bad Request: more than one Transfer-Encoding header");
            has_te = true;
            te = value;
            chunked = iequals(value, "chunked");
        } else if (iequals(name, "Expect")) {
            expect = iequals(value, "100-continue");
        } else if (iequals(name, "Connection")) {
            for (std::string_view rest = value; !rest.empty();) {  // a list of tokens (RFC 9110, 7.6.1)
                const std::size_t comma = rest.find(',');
                if (iequals(trim(rest.substr(0, comma)), "close")) r.close = true;
                rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            }
        }
    }
    const std::size_t head = pos;
    if (http11 && hosts == 0)
        return refuse(r, 400, "Bad Request: an HTTP/1.1 request needs a Host header (RFC 9112, section 3.2)");
    if (hosts > 1) return refuse(r, 400, "Bad Request: more than one Host header");
    if (has_te && lengths > 0) return refuse(r, 400, "Bad Request: both Content-Length and Transfer-Encoding");
    r.head_complete = true;
    if (has_te) {
        if (!chunked) return refuse(r, 400, "Bad Request: unsupported Transfer-Encoding '" + std::string(te) + "'");
        RequestScan c = scan_chunked(r, d, n, head, limits, progress);
        if (c.kind == RequestScan::Incomplete) c.expect_continue = expect && n == head;
        return c;
    }
    std::size_t body = 0;
    if (lengths > 0) {
        if (length.empty() || length.size() > 19)
            return refuse(r, length.size() > 19 && length.find_first_not_of("0123456789") == std::string_view::npos
                                 ? 413 : 400,
                          length.size() > 19 ? "Payload Too Large: the body is over " + std::to_string(limits.max_body) + " bytes"
                                             : "Bad Request: invalid Content-Length ''");
        for (char c : length) {
            if (c < '0' || c > '9')
                return refuse(r, 400, "Bad Request: invalid Content-Length '" + std::string(length) + "'");
            body = body * 10 + static_cast<std::size_t>(c - '0');
        }
        if (body > limits.max_body)
            return refuse(r, 413, "Payload Too Large: the body is over " + std::to_string(limits.max_body) + " bytes");
    }
    if (n < head + body) {
        r.expect_continue = expect && n == head;
        return r;
    }
    r.kind = RequestScan::Ready;
    r.length = head + body;
    return r;
}

}  // namespace vehicledata::emulator
