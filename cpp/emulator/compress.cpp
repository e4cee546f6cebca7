// Response compression (see compress.h).
#include "vehicledata/emulator/compress.h"

#include <zlib.h>

#include <string>

namespace vehicledata::emulator {

namespace {

bool accepts_gzip(const std::string& accept) {
    // A token "gzip" not followed by q=0 ("gzip;q=0" refuses it).
    std::size_t pos = 0;
    while ((pos = accept.find("gzip", pos)) != std::string::npos) {
        std::size_t end = accept.find(',', pos);
        std::string item = accept.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        std::string compact;
        for (char c : item)
            if (c != ' ') compact.push_back(c);
        if (compact.find(";q=0") == std::string::npos || compact.find(";q=0.") != std::string::npos) return true;
        pos += 4;
    }
    return false;
}

bool gzip(const std::string& in, std::string& out) {
    z_stream zs{};
    if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
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

void compress_response(const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) return;  // streamed (content provider) or empty
    std::string type = res.get_header_value("Content-Type");
    const bool json = type == "application/json";
    if (!json && type.rfind("text/", 0) != 0) return;
    if (json) {
        // cpp-httplib only compresses exact content types it knows; a charset keeps it out.
        // (set_header adds a header: drop the old one first.)
        res.headers.erase("Content-Type");
        res.set_header("Content-Type", "application/json; charset=UTF-8");
    }
    if (res.body.size() < kCompressMinBytes || res.has_header("Content-Encoding")) return;
    if (!accepts_gzip(req.get_header_value("Accept-Encoding"))) return;
    std::string packed;
    if (!gzip(res.body, packed)) return;
    res.body = std::move(packed);
    res.set_header("Content-Encoding", "gzip");
    res.set_header("Vary", "Accept-Encoding");
}

}  // namespace vehicledata::emulator
