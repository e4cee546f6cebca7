// Response compression (see compress.h).
#include "compress.h"

#include <zlib.h>

#include <cctype>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "httplib_adapter.h"
#include "routes.h"

namespace vehicledata::emulator {

namespace {

std::string lower_trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// zlib with a gzip (window bits 31) or zlib/"deflate" (15) wrapper, at a fast level.
bool pack(const std::string& in, std::string& out, int window_bits) {
    z_stream zs{};
    if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
    out.resize(deflateBound(&zs, static_cast<uLong>(in.size())) + 32);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&zs, Z_FINISH);
    const std::size_t produced = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) return false;
    out.resize(produced);
    return true;
}

}  // namespace

Coding offered_coding(std::string_view accept_encoding) {
    bool gzip = false, deflate = false, any = false;
    std::string_view rest = accept_encoding;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const auto semi = item.find(';');
        const std::string name = lower_trimmed(item.substr(0, semi));
        double q = 1.0;
        if (semi != std::string_view::npos) {
            const std::string param = lower_trimmed(item.substr(semi + 1));
            if (param.rfind("q=", 0) == 0) q = std::strtod(param.c_str() + 2, nullptr);
        }
        if (!(q > 0)) continue;
        if (name == "gzip" || name == "x-gzip") gzip = true;
        else if (name == "deflate") deflate = true;
        else if (name == "*") any = true;
    }
    if (gzip || any) return Coding::Gzip;
    if (deflate) return Coding::Deflate;
    return Coding::Identity;
}

bool compress_body(const std::string& in, Coding coding, std::string& out) {
    return coding != Coding::Identity && pack(in, out, coding == Coding::Gzip ? 31 : 15);
}

bool compressible_type(const std::string& type) {
    return type.rfind("application/json", 0) == 0 || type.rfind("text/", 0) == 0;
}

Coding coding_for(std::string_view accept_encoding, const std::string& content_type, std::size_t size) {
    if (size <= kCompressMinBytes || !compressible_type(content_type)) return Coding::Identity;
    return offered_coding(accept_encoding);
}

void compress_response(const httplib::Request& req, httplib::Response& res) {
    // The emulator decides the coding: cpp-httplib must not (it would pick brotli for
    // any text/* body). The Request object is the server's own, not a constant.
    // (A header map holds a few fields: one pass over each finds a name without the multimap's
    // case-insensitive search, and an insertion is hinted at its place.)
    const std::string accept = take_request_header(req, "Accept-Encoding");
    std::string type;
    auto first_type = res.headers.end();
    bool encoded = false;
    for (auto it = res.headers.begin(); it != res.headers.end(); ++it) {
        if (first_type == res.headers.end() && header_equal(it->first, "Content-Type")) first_type = it;
        else if (header_equal(it->first, "Content-Encoding")) encoded = true;
    }
    if (first_type != res.headers.end()) type = first_type->second.c_str();  // as get_header_value
    if (type == "application/json") {
        // as erasing every Content-Type and adding one: the first keeps its place, the others go
        first_type->second = "application/json; charset=UTF-8";
        auto other = std::next(first_type);
        while (other != res.headers.end() && header_equal(other->first, "Content-Type")) other = res.headers.erase(other);
    }
    const auto route = match_route(req.path);
    if (route && route->kind == schema::Kind::Login) return;  // login answers: never compressed
    // set_header without its CR/LF check (ours), placed after any field not after it in the order
    auto place = res.headers.begin();
    while (place != res.headers.end() && !header_less("Vary", place->first)) ++place;
    res.headers.emplace_hint(place, "Vary", "Accept-Encoding");
    if (encoded) return;
    const Coding coding = coding_for(accept, type, res.body.size());
    if (coding == Coding::Identity) return;
    std::string packed;
    if (!compress_body(res.body, coding, packed)) return;
    res.body = std::move(packed);
    res.set_header("Content-Encoding", coding == Coding::Gzip ? "gzip" : "deflate");
}

}  // namespace vehicledata::emulator
