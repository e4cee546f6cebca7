// The gate's request framing and limits (request_framing.h: scan_request), byte by byte.
#include <gtest/gtest.h>

#include <string>

#include "request_framing.h"

namespace emu = vehicledata::emulator;
using Kind = emu::RequestScan::Kind;

namespace {
emu::RequestScan scan(const std::string& raw, emu::GateLimits limits = {}) {
    return emu::scan_request(raw.data(), raw.size(), limits);
}
}  // namespace

TEST(EmulatorRequestFraming, CompleteRequestsAndTheirLengths) {
    const std::string get = "GET /api/makes/v2?page=2 HTTP/1.1\r\nHost: x\r\n\r\n";
    auto r = scan(get + "GET /next HTTP/1.1\r\n");
    EXPECT_EQ(r.kind, Kind::Ready);
    EXPECT_EQ(r.length, get.size());  // the pipelined rest is not part of it
    const std::string post = "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
    r = scan(post + "GET");
    EXPECT_EQ(r.kind, Kind::Ready);
    EXPECT_EQ(r.length, post.size());
    // A GET's body belongs to it (CL.0): it is not the next request.
    const std::string smuggle = "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nGET /";
    r = scan(smuggle);
    EXPECT_EQ(r.kind, Kind::Ready);
    EXPECT_EQ(r.length, smuggle.size());
    EXPECT_EQ(scan("GET / HTTP/1.0\r\n\r\n").kind, Kind::Ready);  // HTTP/1.0 needs no Host
    EXPECT_EQ(scan("\r\nGET / HTTP/1.1\nHost: x\n\n").kind, Kind::Ready);  // bare LF, leading empty line
}

TEST(EmulatorRequestFraming, IncompleteUntilTheLastByte) {
    const std::string post = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n";
    auto r = scan(post);
    EXPECT_EQ(r.kind, Kind::Incomplete);
    EXPECT_TRUE(r.head_complete);
    EXPECT_TRUE(r.expect_continue);
    EXPECT_EQ(scan(post + "12345").kind, Kind::Incomplete);
    EXPECT_EQ(scan(post + "1234567890").kind, Kind::Ready);
    EXPECT_EQ(scan("GET / HTTP/1.1\r\nHost: x\r\nX-A: b").kind, Kind::Incomplete);
}

TEST(EmulatorRequestFraming, ChunkedBodies) {
    const std::string head = "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::string body = "2\r\n{}\r\nA;ext=1\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n";
    auto r = scan(head + body + "GET");
    EXPECT_EQ(r.kind, Kind::Ready);
    EXPECT_EQ(r.length, head.size() + body.size());
    EXPECT_EQ(scan(head + "2\r\n{}").kind, Kind::Incomplete);
    EXPECT_EQ(scan(head + "zz\r\n").status, 400);
    EXPECT_EQ(scan(head + "2\r\n{}XX").status, 400);
    emu::GateLimits small;
    small.max_body = 8;
    EXPECT_EQ(scan(head + "9\r\n", small).status, 413);
}

TEST(EmulatorRequestFraming, RefusalsNameTheProblem) {
    struct Case {
        std::string raw;
        int status;
        const char* part;
    };
    const Case cases[] = {
        {"GET /p HTTP/1.1\r\n\r\n", 400, "needs a Host header"},
        {"GET /p HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400, "more than one Host"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, "invalid Content-Length '-1'"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\n", 400, "invalid Content-Length '1 2'"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413, "Payload Too Large"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n", 413, "over 1048576 bytes"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both"},
        {"POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "unsupported Transfer-Encoding"},
        {"GET /p HTTP/1.1\r\nHost : x\r\n\r\n", 400, "malformed header"},
        {"GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n", 414, "over 8192 bytes"},
    };
    for (const Case& c : cases) {
        auto r = scan(c.raw);
        EXPECT_EQ(r.kind, Kind::Refuse) << c.raw.substr(0, 80);
        EXPECT_EQ(r.status, c.status) << c.raw.substr(0, 80);
        EXPECT_NE(r.message.find(c.part), std::string::npos) << r.message;
        EXPECT_EQ(r.url, c.status == 414 ? "/" : "/p");  // httplib keeps nothing of a refused request line either
    }
}

TEST(EmulatorRequestFraming, HeaderLimitsBeforeTheHeadEnds) {
    emu::GateLimits limits;
    limits.max_headers = 3;
    std::string raw = "GET /p HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n";
    EXPECT_EQ(scan(raw, limits).kind, Kind::Incomplete);
    raw += "C: 3\r\n";  // the 4th field: refused without waiting for the end of the head
    auto r = scan(raw, limits);
    EXPECT_EQ(r.status, 431);
    EXPECT_NE(r.message.find("more than 3 header fields"), std::string::npos);
    limits = {};
    limits.max_header_bytes = 2048;
    r = scan("GET /p HTTP/1.1\r\nHost: x\r\nX: " + std::string(3000, 'v'), limits);
    EXPECT_EQ(r.status, 431);
}

TEST(EmulatorRequestFraming, EmptyLinesBeforeTheRequestAreSkipped) {
    const std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    auto r = scan("\r\n\n" + get);
    EXPECT_EQ(r.kind, Kind::Ready);
    EXPECT_EQ(r.start, 3u);  // the request handed on starts after them (RFC 9112, section 2.2)
    EXPECT_EQ(r.length, 3 + get.size());
    EXPECT_EQ(scan(get).start, 0u);
}

TEST(EmulatorRequestFraming, ConnectionCloseInAnyCaseAndInALists) {
    for (const char* value : {"close", "Close", "CLOSE", " keep-alive , cLoSe ", "upgrade,close"})
        EXPECT_TRUE(scan(std::string("GET / HTTP/1.1\r\nHost: x\r\nConnection: ") + value + "\r\n\r\n").close) << value;
    for (const char* value : {"keep-alive", "Keep-Alive", "closed", "x-close"})
        EXPECT_FALSE(scan(std::string("GET / HTTP/1.1\r\nHost: x\r\nConnection: ") + value + "\r\n\r\n").close) << value;
    EXPECT_FALSE(scan("GET / HTTP/1.1\r\nHost: x\r\n\r\n").close);
}

TEST(EmulatorRequestFraming, ChunkedScanResumesWhereTheLastOneStopped) {
    const std::string head = "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    std::string raw = head;
    for (int i = 0; i < 1000; ++i) raw += "1\r\nx\r\n";
    const std::string whole = raw + "3\r\nabc\r\n0\r\n\r\n";
    // Fed a few bytes at a time, as reads deliver them, with one progress: the same answers as a
    // scan of the whole, and the progress always at a chunk-size line inside the buffer.
    emu::GateLimits limits;
    emu::ChunkProgress progress;
    for (std::size_t n = head.size(); n < whole.size(); n += 5) {
        auto r = emu::scan_request(whole.data(), n, limits, &progress);
        EXPECT_EQ(r.kind, scan(whole.substr(0, n)).kind) << n;
        EXPECT_LE(progress.pos, n);
    }
    auto r = emu::scan_request(whole.data(), whole.size(), limits, &progress);
    EXPECT_EQ(r.kind, Kind::Ready);
    EXPECT_EQ(r.length, whole.size());
    // The total of the chunks read before counts toward the body limit.
    limits.max_body = 1001;
    progress = {};
    EXPECT_EQ(emu::scan_request(raw.data(), raw.size(), limits, &progress).kind, Kind::Incomplete);
    EXPECT_EQ(progress.total, 1000u);
    r = emu::scan_request(whole.data(), whole.size(), limits, &progress);
    EXPECT_EQ(r.kind, Kind::Refuse);
    EXPECT_EQ(r.status, 413);
}
