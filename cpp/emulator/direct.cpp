// The gate's direct path (see direct.h): httplib 0.11's request reading and response writing for
// the plain GET and HEAD requests, from the bytes the gate has framed.
#include "direct.h"

#include <algorithm>
#include <memory>
#include <string>

#include "http_date.h"
#include "httplib_adapter.h"

namespace vehicledata::emulator {

namespace {

constexpr std::size_t kLineMax = 8000;  // under httplib's 8192 (request line and header line limits)

bool space_or_tab(char c) { return c == ' ' || c == '\t'; }

// httplib decodes the path and every header value (decode_url, '+' kept); most have nothing to decode.
std::string decoded(std::string_view s) {
    if (s.find('%') == std::string_view::npos) return std::string(s);
    return httplib_decode(std::string(s));
}

// One line from `pos`, which must end in CRLF (httplib skips or refuses the others); false otherwise.
bool crlf_line(std::string_view raw, std::size_t& pos, std::string_view& line) {
    const std::size_t nl = raw.find('\n', pos);
    if (nl == std::string_view::npos || nl == pos || raw[nl - 1] != '\r' || nl + 1 - pos > kLineMax) return false;
    line = raw.substr(pos, nl - 1 - pos);
    pos = nl + 1;
    return true;
}

// The body of a content provider of known length, as httplib's write_content writes it.
bool write_provided(httplib::Stream& strm, httplib::Response& res, const HttpCore& core) {
    std::size_t offset = 0;
    const std::size_t end = provider_length(res);
    bool ok = true;
    httplib::DataSink sink;
    sink.write = [&](const char* d, std::size_t l) -> bool {
        if (!ok) return false;
        for (std::size_t done = 0; done < l;) {
            const ssize_t n = strm.write(d + done, l - done);
            if (n < 0) return ok = false;
            done += static_cast<std::size_t>(n);
        }
        offset += l;
        return true;
    };
    sink.is_writable = [&] { return ok && strm.is_writable(); };
    while (offset < end && !core.shutting_down()) {
        if (!provider_of(res)(offset, end - offset, sink) || !ok) return false;
    }
    return true;
}

}  // namespace

bool parse_direct(std::string_view raw, httplib::Request& req) {
    std::size_t pos = 0;
    std::string_view line;
    if (!crlf_line(raw, pos, line) || line.find('\0') != std::string_view::npos) return false;
    // METHOD SP target SP version, single spaces (httplib splits on runs of spaces; nothing else differs)
    const std::size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos) return false;
    const std::size_t sp2 = line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) return false;
    const std::string_view method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if ((method != "GET" && method != "HEAD") || (version != "HTTP/1.1" && version != "HTTP/1.0")) return false;
    if (target.empty() || target.front() != '/') return false;
    const std::size_t q = target.find('?');
    if (q != std::string_view::npos && target.find('?', q + 1) != std::string_view::npos) return false;
    for (;;) {
        if (!crlf_line(raw, pos, line)) return false;
        if (line.empty()) break;
        while (!line.empty() && space_or_tab(line.back())) line.remove_suffix(1);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) return false;
        const std::string_view name = line.substr(0, colon);
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && space_or_tab(value.front())) value.remove_prefix(1);
        if (value.empty()) return false;  // httplib drops such a field
        if (iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding") || iequals(name, "Expect"))
            return false;
        req.headers.emplace(std::string(name), decoded(value));
    }
    if (pos != raw.size()) return false;  // a body follows
    // A Range httplib cannot parse it answers itself (416 before routing): left to it. One it
    // parses is dropped by the server (ignore_ranges) on both paths; the feed reads the header.
    if (req.has_header("Range") && !httplib_parse_ranges(req.get_header_value("Range"), req.ranges))
        return false;
    req.method.assign(method);
    req.target.assign(target);
    req.version.assign(version);
    req.path = decoded(target.substr(0, q));
    return true;
}

void finish_headers(const httplib::Request& req, httplib::Response& res, std::int64_t unix_seconds,
                    bool byte_ranges) {
    res.headers.emplace("Date", http_date(unix_seconds));  // set_header without its CR/LF check: ours
    const bool ranges = byte_ranges && (res.status == 200 || res.status == 206);
    if (req.method == "HEAD" || ranges) res.headers.erase("Accept-Ranges");
    if (ranges) res.set_header("Accept-Ranges", "bytes");
}

bool request_closes(const httplib::Request& req) {
    const std::string_view connection = first_header(req.headers, "Connection");
    return connection == "close" || (req.version == "HTTP/1.0" && connection != "Keep-Alive");
}

void connection_fields(const httplib::Request& req, httplib::Response& res, bool close_connection,
                       time_t idle_timeout) {
    res.headers.erase("Connection");
    res.headers.erase("Keep-Alive");
    if (close_connection || request_closes(req)) res.headers.emplace("Connection", "close");
    else res.headers.emplace("Keep-Alive", "timeout=" + std::to_string(idle_timeout));
}

bool write_direct(httplib::Stream& strm, bool close_connection, const httplib::Request& req, httplib::Response& res,
                  const HttpCore& core) {
    // The fields httplib adds, in the order it adds them (set_header: after any field of an equal
    // name): Server::apply_ranges without ranges (the emulator's compress_response has removed the
    // request's Accept-Encoding, so httplib compresses nothing), then Server::write_response_core
    // with the server's post-routing correction of the connection fields (connection_fields: the
    // Connection and Keep-Alive fields res has are dropped), the default Content-Type and the
    // empty body's Content-Length. (httplib's Accept-Ranges on HEAD is left out: the server's
    // finish_headers drops it there, so a HEAD carries exactly the GET's headers.) They are merged
    // into res's fields as the head is written rather than inserted into its multimap.
    bool has_type = false, has_length = false;
    for (const auto& field : res.headers) {
        if (header_equal(field.first, "Content-Type")) has_type = true;
        else if (header_equal(field.first, "Content-Length")) has_length = true;
    }
    const bool provided = static_cast<bool>(provider_of(res));
    struct Added {
        std::string_view name;
        std::string value;
    };
    Added added[4];
    int n = 0;
    if (!res.body.empty()) added[n++] = {"Content-Length", std::to_string(res.body.size())};
    else if (provider_length(res) > 0) added[n++] = {"Content-Length", std::to_string(provider_length(res))};
    if (n > 0) has_length = true;
    if (close_connection || request_closes(req)) added[n++] = {"Connection", "close"};
    else added[n++] = {"Keep-Alive", "timeout=" + std::to_string(core.keep_alive_timeout())};
    if (!has_type && (!res.body.empty() || provider_length(res) > 0 || provided)) added[n++] = {"Content-Type", "text/plain"};
    if (!has_length && res.body.empty() && !provider_length(res) && !provided) added[n++] = {"Content-Length", "0"};
    // the multimap's order among them: by name, equal names in the order added (a stable sort)
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && header_less(added[j].name, added[j - 1].name); --j) std::swap(added[j], added[j - 1]);

    std::string head;
    head.reserve(256);
    head.append("HTTP/1.1 ");
    head.append(std::to_string(res.status));
    head.push_back(' ');
    head.append(httplib_reason(res.status));
    head.append("\r\n");
    int next = 0;
    auto field = [&head](std::string_view name, const char* value) {
        head.append(name);
        head.append(": ");
        head.append(value);  // httplib formats "%s: %s\r\n": up to a NUL
        head.append("\r\n");
    };
    for (const auto& [name, value] : res.headers) {
        if (header_equal(name, "Connection") || header_equal(name, "Keep-Alive")) continue;
        while (next < n && header_less(added[next].name, name)) {
            field(added[next].name, added[next].value.c_str());
            ++next;
        }
        field(name.c_str(), value.c_str());
    }
    for (; next < n; ++next) field(added[next].name, added[next].value.c_str());
    head.append("\r\n");
    strm.write(head.data(), head.size());

    if (req.method == "HEAD") return true;
    auto* deferring = dynamic_cast<DeferringStream*>(&strm);
    if (!res.body.empty()) {
        if (!deferring || res.body.size() <= kPullBytes) return strm.write(res.body.data(), res.body.size()) >= 0;
        // a large rendered body (an uncached verbose page): the gate sends it as the socket drains
        auto body = std::make_shared<const std::string>(std::move(res.body));
        res.body.clear();
        deferring->defer([body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            return sink.write(body->data() + offset, std::min(length, body->size() - offset));
        }, body->size());
        return true;
    }
    if (!provider_of(res)) return true;
    if (provider_length(res) == 0 || chunked_provider(res)) return false;  // not on the data endpoints
    if (deferring) {  // the cached body, the feed ZIP: pulled by the gate as the socket drains
        deferring->defer(provider_of(res), provider_length(res));
        set_provider_success(res, true);
        return true;
    }
    const bool ok = write_provided(strm, res, core);
    set_provider_success(res, ok);
    return ok;
}

}  // namespace vehicledata::emulator
