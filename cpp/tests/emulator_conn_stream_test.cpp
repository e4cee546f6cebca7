// The gate's connection stream (conn_stream.h) over a socketpair: what httplib reads of a
// connection, how an answer leaves (buffered, deferred, pulled again as the socket drains) and
// what the totals count.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "conn_stream.h"

namespace emu = vehicledata::emulator;

namespace {

// A connection over one end of a socketpair; the test plays the client on the other.
struct Wire {
    emu::Conn c;
    int peer = -1;
    Wire() {
        int fds[2];
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
        c.fd = fds[0];
        peer = fds[1];
    }
    ~Wire() {
        if (!c.out.empty()) emu::ConnStream::release_out(c);
        ::close(c.fd);
        if (peer >= 0) ::close(peer);
    }
    // What the client can read now.
    std::string drain() {
        std::string got;
        char buf[65536];
        for (ssize_t n; (n = ::recv(peer, buf, sizeof buf, MSG_DONTWAIT)) > 0;) got.append(buf, static_cast<std::size_t>(n));
        return got;
    }
};

// A body in memory, pulled as httplib's content providers are; records each call.
struct Body {
    std::shared_ptr<std::string> bytes;
    std::shared_ptr<std::vector<std::pair<std::size_t, std::size_t>>> calls =
        std::make_shared<std::vector<std::pair<std::size_t, std::size_t>>>();
    explicit Body(std::string b) : bytes(std::make_shared<std::string>(std::move(b))) {}
    httplib::ContentProvider provider() const {
        auto b = bytes;
        auto c = calls;
        return [b, c](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            c->emplace_back(offset, length);
            return sink.write(b->data() + offset, length);
        };
    }
};

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
    return s;
}

}  // namespace

TEST(EmulatorConnStream, ReadsGiveTheServedRequestOnly) {
    emu::Conn c;
    const std::string first = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    c.buf = "\r\n" + first + "GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
    c.request_start = 2;
    c.request_length = 2 + first.size();
    emu::GateLimits limits;
    emu::ConnStream s(c, limits);
    EXPECT_TRUE(s.is_readable());
    char one;
    ASSERT_EQ(s.read(&one, 1), 1);  // httplib reads the head a byte at a time
    EXPECT_EQ(one, 'G');
    char rest[256];
    const ssize_t n = s.read(rest, sizeof rest);
    EXPECT_EQ(std::string(1, one) + std::string(rest, static_cast<std::size_t>(n)), first);
    EXPECT_FALSE(s.is_readable());
    EXPECT_EQ(s.read(rest, sizeof rest), 0);  // the pipelined request is not this one's
}

TEST(EmulatorConnStream, AnAnswerIsBufferedThenFlushed) {
    Wire w;
    emu::GateLimits limits;
    const std::size_t before = emu::stream_totals().buffered_bytes;
    emu::ConnStream s(w.c, limits);
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    ASSERT_EQ(s.write(answer.data(), 20), 20);
    ASSERT_EQ(s.write(answer.data() + 20, answer.size() - 20), static_cast<ssize_t>(answer.size() - 20));
    EXPECT_EQ(w.drain(), "");  // nothing sent before the flush
    EXPECT_EQ(emu::stream_totals().buffered_bytes, before + answer.size());
    EXPECT_TRUE(s.flush());
    EXPECT_FALSE(emu::pending(w.c));
    EXPECT_EQ(emu::stream_totals().buffered_bytes, before);
    EXPECT_EQ(w.drain(), answer);
}

TEST(EmulatorConnStream, ADeferredBodyLeavesWithItsHeadAndIsPulledOnce) {
    Wire w;
    emu::GateLimits limits;
    emu::ConnStream s(w.c, limits);
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n";
    Body body("hello world");
    ASSERT_EQ(s.write(head.data(), head.size()), static_cast<ssize_t>(head.size()));
    s.defer(body.provider(), body.bytes->size());
    EXPECT_TRUE(emu::pending(w.c));
    EXPECT_TRUE(s.flush());
    EXPECT_FALSE(emu::pending(w.c));  // all sent, the provider released
    EXPECT_EQ(w.drain(), head + "hello world");
    ASSERT_EQ(body.calls->size(), 1u);  // all the rest asked for at once
    EXPECT_EQ((*body.calls)[0], std::make_pair(std::size_t{0}, std::size_t{11}));
}

TEST(EmulatorConnStream, ASlowReaderGetsTheRestAsTheSocketDrains) {
    Wire w;
    emu::GateLimits limits;
    emu::ConnStream s(w.c, limits);
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\n\r\n";
    Body body(pattern(4u << 20));  // far more than a socket buffer
    ASSERT_EQ(s.write(head.data(), head.size()), static_cast<ssize_t>(head.size()));
    s.defer(body.provider(), body.bytes->size());
    ASSERT_TRUE(s.flush());
    EXPECT_TRUE(emu::pending(w.c));  // the socket is full: the rest is the reactor's
    std::string got = w.drain();
    while (emu::pending(w.c)) {  // the reactor's turns: pump as the socket drains
        ASSERT_TRUE(emu::ConnStream::pump(w.c));
        got += w.drain();
    }
    got += w.drain();
    EXPECT_EQ(got.size(), head.size() + body.bytes->size());
    EXPECT_TRUE(got == head + *body.bytes);
    // Nothing copied: each pull starts at the first byte the socket had not taken and asks for
    // all the rest.
    ASSERT_GT(body.calls->size(), 1u);
    std::size_t last = 0;
    for (std::size_t i = 0; i < body.calls->size(); ++i) {
        const auto [offset, length] = (*body.calls)[i];
        if (i > 0) EXPECT_GT(offset, last);
        EXPECT_EQ(offset + length, body.bytes->size());
        last = offset;
    }
}

TEST(EmulatorConnStream, ConnectionsPumpedInTurnOnOneThreadKeepTheirOwnBodies) {
    // pump() offers every provider the same sink of its thread (httplib's DataSink is costly to
    // build): a full socket on one connection must not stop or divert the next connection's body.
    Wire a, b;
    emu::GateLimits limits;
    Body big(pattern(4u << 20)), small("the small one");
    {
        emu::ConnStream sa(a.c, limits);
        sa.defer(big.provider(), big.bytes->size());
        ASSERT_TRUE(sa.flush());
    }
    ASSERT_TRUE(emu::pending(a.c));  // a's socket is full
    {
        emu::ConnStream sb(b.c, limits);
        sb.defer(small.provider(), small.bytes->size());
        ASSERT_TRUE(sb.flush());
    }
    EXPECT_FALSE(emu::pending(b.c));
    EXPECT_EQ(b.drain(), *small.bytes);
    std::string got = a.drain();
    while (emu::pending(a.c)) {
        ASSERT_TRUE(emu::ConnStream::pump(a.c));
        got += a.drain();
    }
    got += a.drain();
    EXPECT_TRUE(got == *big.bytes);
}

TEST(EmulatorConnStream, AProviderThatStopsOrGivesNothingFailsTheConnection) {
    for (bool gives_nothing : {false, true}) {
        Wire w;
        emu::GateLimits limits;
        emu::ConnStream s(w.c, limits);
        s.defer([gives_nothing](std::size_t, std::size_t, httplib::DataSink&) { return gives_nothing; }, 10);
        EXPECT_FALSE(s.flush());
        EXPECT_TRUE(s.failed());
        EXPECT_FALSE(emu::pending(w.c));  // the provider is released
    }
}

TEST(EmulatorConnStream, ALargeAnswerIsCountedOnceAndStillBuffered) {
    Wire w;
    emu::GateLimits limits;
    limits.max_output = 10;
    const auto before = emu::stream_totals();
    emu::ConnStream s(w.c, limits);
    ASSERT_EQ(s.write("0123456789ab", 12), 12);
    ASSERT_EQ(s.write("cd", 2), 2);
    const auto after = emu::stream_totals();
    EXPECT_EQ(after.large_handed, before.large_handed + 1);
    EXPECT_EQ(after.worker_writes, before.worker_writes);
    EXPECT_EQ(w.c.out, "0123456789abcd");
    EXPECT_TRUE(s.flush());
    EXPECT_EQ(w.drain(), "0123456789abcd");
}

TEST(EmulatorConnStream, WithAllBuffersFullTheWorkerWritesItself) {
    Wire w;
    emu::GateLimits limits;
    limits.max_output_total = 0;
    const auto before = emu::stream_totals();
    emu::ConnStream s(w.c, limits);
    ASSERT_EQ(s.write("abc", 3), 3);
    EXPECT_TRUE(w.c.out.empty());  // straight to the socket
    ASSERT_EQ(s.write("def", 3), 3);
    EXPECT_EQ(emu::stream_totals().worker_writes, before.worker_writes + 1);  // one answer, counted once
    EXPECT_TRUE(s.flush());
    EXPECT_EQ(w.drain(), "abcdef");
}

TEST(EmulatorConnStream, AClosedPeerFailsTheFlush) {
    Wire w;
    ::close(w.peer);
    w.peer = -1;
    emu::GateLimits limits;
    emu::ConnStream s(w.c, limits);
    ASSERT_EQ(s.write("abc", 3), 3);  // buffered: the failure shows when it is sent
    EXPECT_FALSE(s.flush());
    EXPECT_TRUE(s.failed());
    EXPECT_EQ(s.write("x", 1), -1);
    EXPECT_FALSE(emu::pending(w.c));
}

TEST(EmulatorConnStream, ReadAvailableAppendsUntilEndOfInput) {
    Wire w;
    ASSERT_EQ(::write(w.peer, "GET / HT", 8), 8);
    emu::read_available(w.c, 1 << 20);
    EXPECT_EQ(w.c.buf, "GET / HT");
    EXPECT_FALSE(w.c.eof);
    ASSERT_EQ(::write(w.peer, "TP/1.0\r\n\r\n", 10), 10);
    ::shutdown(w.peer, SHUT_WR);
    emu::read_available(w.c, 1 << 20);
    EXPECT_EQ(w.c.buf, "GET / HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(w.c.eof);
}

TEST(EmulatorConnStream, ALingeringConnectionDropsWhatArrives) {
    Wire w;
    w.c.lingering = true;
    ASSERT_EQ(::write(w.peer, "more", 4), 4);
    emu::read_available(w.c, 1 << 20);
    EXPECT_TRUE(w.c.buf.empty());
    EXPECT_FALSE(w.c.eof);
}

TEST(EmulatorConnStream, TheAddressesAreTheConnections) {
    emu::Conn c;
    c.remote_ip = "10.0.0.1";
    c.remote_port = 4242;
    c.local_ip = "127.0.0.1";
    c.local_port = 80;
    c.fd = 7;
    emu::GateLimits limits;
    emu::ConnStream s(c, limits);
    std::string ip;
    int port = 0;
    s.get_remote_ip_and_port(ip, port);
    EXPECT_EQ(ip, "10.0.0.1");
    EXPECT_EQ(port, 4242);
    s.get_local_ip_and_port(ip, port);
    EXPECT_EQ(ip, "127.0.0.1");
    EXPECT_EQ(port, 80);
    EXPECT_EQ(s.socket(), 7);
}
