// libFuzzer target: the emulator's request parsing.  The input is a raw request
// as a client sends it; it goes through the gate's framing and limits
// (scan_request: request line, header fields, Content-Length, chunked bodies),
// then, as the server does for a request it accepts, the path is percent-decoded
// and routed (match_route), the query string parsed and deduped (parse_query,
// dedupe_params) and a Range header interpreted (parse_byte_range); a request the
// gate frames goes through the direct path's parsing too (parse_direct, direct.h).
// Build: see docs/reliability.md (CMake option VEHICLEDATA_FUZZ).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "direct.h"
#include "routes.h"
#include "request_framing.h"
#include "range.h"
#include "vehicledata/format.h"

namespace emu = vehicledata::emulator;
namespace format = vehicledata::format;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const char* d = reinterpret_cast<const char*>(data);
    emu::GateLimits limits;
    limits.max_headers = 20;
    limits.max_header_bytes = 4096;
    limits.max_body = 4096;
    const emu::RequestScan s = emu::scan_request(d, size, limits);
    if (s.kind == emu::RequestScan::Ready && (s.length == 0 || s.length > size)) std::abort();
    if (s.kind == emu::RequestScan::Refuse && (s.status < 400 || s.status > 499)) std::abort();
    if (s.kind == emu::RequestScan::Ready) {
        httplib::Request req;
        if (emu::parse_direct(std::string_view(d, s.length), req) &&
            ((req.method != "GET" && req.method != "HEAD") || req.target.empty() || req.target.front() != '/'))
            std::abort();
    }

    // The request line's target, and every header value as a Range header.
    const std::string_view text(d, size);
    const std::size_t line_end = text.find('\n');
    const std::string_view line = text.substr(0, line_end);
    const std::size_t sp1 = line.find(' ');
    const std::string_view target = sp1 == std::string_view::npos ? line : line.substr(sp1 + 1, line.find(' ', sp1 + 1) - sp1 - 1);
    const std::size_t q = target.find('?');
    std::string path;
    if (format::url_decode(target.substr(0, q), path, false)) {
        if (auto route = emu::match_route(path))
            if (route->method == nullptr) std::abort();
    }
    if (q != std::string_view::npos) {
        try {
            const auto all = format::parse_query(target.substr(q + 1));
            if (emu::dedupe_params(all).size() > all.size()) std::abort();
        } catch (const format::QueryStringError&) {
        }
    }
    if (line_end != std::string_view::npos) {
        std::string_view rest = text.substr(line_end + 1);
        for (int i = 0; i < 20 && !rest.empty(); ++i) {
            const std::size_t nl = rest.find('\n');
            const std::string_view h = rest.substr(0, nl);
            const std::size_t colon = h.find(':');
            if (colon != std::string_view::npos) {
                const emu::ByteRange r = emu::parse_byte_range(h.substr(colon + 1), 1000);
                if (r.kind == emu::ByteRange::Kind::Partial && (r.first > r.last || r.last >= 1000)) std::abort();
            }
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
    }
    return 0;
}
