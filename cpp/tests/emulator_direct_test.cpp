// The gate's direct path (cpp/emulator/direct.h): which requests parse_direct takes and the Request
// it builds, and write_direct's bytes against cpp-httplib's own processing of the same request
// with the same handler (process_request over an in-memory stream).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "direct.h"
#include "gate.h"

namespace emu = vehicledata::emulator;

namespace {

// A request's bytes in, the response's bytes out.
class MemoryStream : public httplib::Stream {
public:
    explicit MemoryStream(std::string in) : in_(std::move(in)) {}
    bool is_readable() const override { return pos_ < in_.size(); }
    bool is_writable() const override { return true; }
    ssize_t read(char* ptr, size_t size) override {
        const std::size_t n = std::min(size, in_.size() - pos_);
        std::memcpy(ptr, in_.data() + pos_, n);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }
    ssize_t write(const char* ptr, size_t size) override {
        out.append(ptr, size);
        return static_cast<ssize_t>(size);
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        ip = "127.0.0.1";
        port = 40000;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        ip = "127.0.0.1";
        port = 8080;
    }
    socket_t socket() const override { return INVALID_SOCKET; }
    std::string out;

private:
    std::string in_;
    std::size_t pos_ = 0;
};

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

constexpr std::int64_t kNow = 1795635966;  // Date: Wed, 25 Nov 2026 19:46:06 GMT
constexpr time_t kIdle = 7;                 // the server's --idle-timeout, as its httplib keep-alive timeout

// httplib's bytes for `raw` answered by `handler` in its pre-routing hook, finished in its
// post-routing hook (as the emulator answers; `ranges`: a path of byte ranges, the data feed).
std::string through_httplib(const std::string& raw, const Handler& handler, bool close, bool& closed,
                            bool ranges) {
    emu::HttpCore core;
    core.set_keep_alive_timeout(kIdle);
    core.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
        handler(req, res);
        return httplib::Server::HandlerResponse::Handled;
    });
    core.set_post_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
        emu::connection_fields(req, res, res.get_header_value("Connection") == "close", kIdle);
        emu::finish_headers(req, res, kNow, ranges);
    });
    core.set_listening_socket(0);  // not shutting down
    MemoryStream s(raw);
    closed = false;
    core.process_request(s, close, closed, nullptr);
    return s.out;
}

// The direct path's bytes for the same request and handler.
std::string through_direct(const std::string& raw, const Handler& handler, bool close, bool& closed,
                           bool ranges) {
    emu::HttpCore core;
    core.set_keep_alive_timeout(kIdle);
    core.set_listening_socket(0);
    httplib::Request req;
    EXPECT_TRUE(emu::parse_direct(raw, req)) << raw;
    closed = emu::request_closes(req);
    httplib::Response res;
    handler(req, res);
    if (res.status == -1) res.status = 200;
    MemoryStream s("");
    emu::finish_headers(req, res, kNow, ranges);
    emu::write_direct(s, close, req, res, core);
    return s.out;
}

// Both paths' bytes for `raw`, checked equal; httplib's returned.
std::string expect_same(const std::string& raw, const Handler& handler, bool close = false, bool ranges = false) {
    bool closed_a = false, closed_b = false;
    const std::string a = through_httplib(raw, handler, close, closed_a, ranges);
    const std::string b = through_direct(raw, handler, close, closed_b, ranges);
    EXPECT_EQ(a, b) << raw;
    EXPECT_EQ(closed_a, closed_b) << raw;
    EXPECT_FALSE(a.empty());
    EXPECT_NE(a.find("\r\nDate: Wed, 25 Nov 2026 19:46:06 GMT\r\n"), std::string::npos) << a;
    if (!ranges) EXPECT_EQ(a.find("Accept-Ranges"), std::string::npos) << a;  // not on GET, so not on HEAD either
    // the connection fields say what happens next: close, or keep-alive with the idle timeout and no max
    const bool closes = close || closed_a;
    EXPECT_EQ(a.find("\r\nConnection: close\r\n") != std::string::npos, closes) << a;
    EXPECT_EQ(a.find("\r\nKeep-Alive: timeout=7\r\n") != std::string::npos, !closes) << a;
    EXPECT_EQ(a.find("max="), std::string::npos) << a;
    return a;
}

const Handler kJson = [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Vary", "Accept-Encoding");
    res.set_content("{\"path\":\"" + req.path + "\",\"target\":\"" + req.target + "\",\"x\":\"" +
                        req.get_header_value("X-Value") + "\"}",
                    "application/json; charset=UTF-8");
};

const Handler kProvider = [](const httplib::Request&, httplib::Response& res) {
    auto body = std::make_shared<std::string>(100000, 'y');
    res.set_header("X-Emulator-Synthetic", "msrp");
    res.set_content_provider(body->size(), "application/json",
                             [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                 return sink.write(body->data() + offset, std::min<std::size_t>(length, 4096));
                             });
};

}  // namespace

TEST(DirectPath, ParsesWhatHttplibParses) {
    httplib::Request req;
    ASSERT_TRUE(emu::parse_direct("GET /api/trims%2Fv2?limit=5&make=A%20B HTTP/1.1\r\nHost: x\r\n"
                                  "authorization:  Bearer t  \r\nX-Value: a%41\r\n\r\n",
                                  req));
    EXPECT_EQ(req.method, "GET");
    EXPECT_EQ(req.target, "/api/trims%2Fv2?limit=5&make=A%20B");
    EXPECT_EQ(req.path, "/api/trims/v2");
    EXPECT_EQ(req.version, "HTTP/1.1");
    EXPECT_EQ(req.get_header_value("Authorization"), "Bearer t");  // names case-insensitive, value trimmed
    EXPECT_EQ(req.get_header_value("X-Value"), "aA");                // values URL-decoded, as httplib does
    EXPECT_EQ(req.headers.size(), 3u);
}

TEST(DirectPath, DeclinesWhatHttplibReadsDifferently) {
    const char* declined[] = {
        "POST /api/years HTTP/1.1\r\nHost: x\r\n\r\n",                     // a method with a body
        "GET /api/years HTTP/2.0\r\nHost: x\r\n\r\n",                      // a version httplib refuses
        "GET  /api/years HTTP/1.1\r\nHost: x\r\n\r\n",                     // runs of spaces
        "GET /api/years?a=1?b=2 HTTP/1.1\r\nHost: x\r\n\r\n",              // httplib: 400
        "GET http://x/api/years HTTP/1.1\r\nHost: x\r\n\r\n",              // absolute form
        "\r\nGET /api/years HTTP/1.1\r\nHost: x\r\n\r\n",                  // a leading empty line
        "GET /api/years HTTP/1.1\nHost: x\r\n\r\n",                        // a bare LF
        "GET /api/years HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",                // httplib skips such a line
        "GET /api/years HTTP/1.1\r\nHost: x\r\nX-Empty:\r\n\r\n",          // httplib drops an empty value
        "GET /api/years HTTP/1.1\r\nHost: x\r\nRange: bytes=abc\r\n\r\n",  // a Range httplib refuses (416)
        "GET /api/years HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n",
        "GET /api/years HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab",
        "GET /api/years HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    };
    for (const char* raw : declined) {
        httplib::Request req;
        EXPECT_FALSE(emu::parse_direct(raw, req)) << raw;
    }
    httplib::Request req;
    // a Range httplib parses is read as httplib reads it (the server then drops it on both paths)
    EXPECT_TRUE(emu::parse_direct("GET /api/data-feeds/download HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\n\r\n", req));
    ASSERT_EQ(req.ranges.size(), 1u);
    EXPECT_EQ(req.ranges[0].first, 0);
    EXPECT_EQ(req.ranges[0].second, 1);
    req = httplib::Request();
    const std::string long_value = "GET /api/years HTTP/1.1\r\nHost: x\r\nX: " + std::string(8100, 'v') + "\r\n\r\n";
    EXPECT_FALSE(emu::parse_direct(long_value, req));
}

TEST(DirectPath, WritesHttplibsBytes) {
    const std::string auth = "Authorization: Bearer abc\r\n";
    expect_same("GET /api/trims/v2?limit=5 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", kJson);
    expect_same("GET /api/trims/v2?limit=5 HTTP/1.1\r\nHost: x\r\n\r\n", kJson, true);  // the client's EOF seen
    expect_same("HEAD /api/trims/v2 HTTP/1.1\r\nHost: x\r\n\r\n", kJson);
    expect_same("GET /api/trims/v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", kJson);
    expect_same("GET /api/trims/v2 HTTP/1.0\r\nHost: x\r\n\r\n", kJson);
    expect_same("GET /api/trims/v2 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", kJson);
    expect_same("GET /api/a%2Fb?x=%41 HTTP/1.1\r\nHost: x\r\nX-Value: %7B\r\n\r\n", kJson);
    expect_same("GET /api/vin/1 HTTP/1.1\r\nHost: x\r\n\r\n", kProvider);
    expect_same("HEAD /api/vin/1 HTTP/1.1\r\nHost: x\r\n\r\n", kProvider);
    expect_same("GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n", [](const httplib::Request&, httplib::Response& res) {
        res.status = 429;
        res.set_header("Retry-After", "3");
        res.set_content("{\"code\":429}", "application/json");
    });
    expect_same("GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n", [](const httplib::Request&, httplib::Response& res) {
        res.status = 418;
        res.body = "teapot";  // no Content-Type: httplib's default
    });
    expect_same("GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n", [](const httplib::Request&, httplib::Response& res) {
        res.status = 204;  // no body: Content-Length 0
    });
    expect_same("GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n", [](const httplib::Request&, httplib::Response&) {});
}

TEST(DirectPath, ConnectionFieldsSayWhatTheGateDoes) {
    // HTTP/1.0 without Keep-Alive is closed after its answer: "Connection: close", no Keep-Alive
    // (httplib alone announced "Keep-Alive: timeout=5, max=5" and closed it).
    std::string a = expect_same("GET /api/trims/v2 HTTP/1.0\r\nHost: x\r\n\r\n", kJson);
    EXPECT_NE(a.find("\r\nConnection: close\r\n"), std::string::npos) << a;
    EXPECT_EQ(a.find("Keep-Alive"), std::string::npos) << a;
    a = expect_same("GET /api/trims/v2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", kJson);  // httplib: exact case
    EXPECT_EQ(a.find("Keep-Alive"), std::string::npos) << a;
    a = expect_same("GET /api/trims/v2 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", kJson);
    EXPECT_NE(a.find("\r\nKeep-Alive: timeout=7\r\n"), std::string::npos) << a;
    a = expect_same("GET /api/trims/v2 HTTP/1.1\r\nHost: x\r\n\r\n", kJson);
    EXPECT_NE(a.find("\r\nKeep-Alive: timeout=7\r\n"), std::string::npos) << a;
    EXPECT_EQ(a.find("Connection:"), std::string::npos) << a;
    a = expect_same("GET /api/trims/v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", kJson);
    EXPECT_EQ(a.find("Keep-Alive"), std::string::npos) << a;
}

TEST(DirectPath, AcceptRangesOnTheByteRangePathsSuccessOnly) {
    const Handler zip = [](const httplib::Request&, httplib::Response& res) {
        res.status = 206;
        res.set_header("Content-Range", "bytes 0-3/10");
        res.set_content("PK\x03\x04", "application/zip");
    };
    for (const char* method : {"GET", "HEAD"}) {
        const std::string a = expect_same(std::string(method) + " /f HTTP/1.1\r\nHost: x\r\n\r\n", zip, false, true);
        EXPECT_NE(a.find("\r\nAccept-Ranges: bytes\r\n"), std::string::npos) << a;
        EXPECT_EQ(a.find("Accept-Ranges"), a.rfind("Accept-Ranges")) << a;  // once, on HEAD too
        // an error of that path carries none, GET and HEAD alike
        const std::string e = expect_same(std::string(method) + " /f HTTP/1.1\r\nHost: x\r\n\r\n",
                                          [](const httplib::Request&, httplib::Response& res) {
                                              res.status = 401;
                                              res.set_content("Unauthorized", "text/plain");
                                          },
                                          false, true);
        EXPECT_EQ(e.find("Accept-Ranges"), std::string::npos) << e;
    }
}
