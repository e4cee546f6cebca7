// The gate's reactor (reactor.h): readiness of descriptors, and the wake-up, over socketpairs.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "reactor.h"

namespace emu = vehicledata::emulator;

namespace {

struct Pair {
    int a = -1, b = -1;
    Pair() {
        int fds[2];
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
        a = fds[0];
        b = fds[1];
    }
    ~Pair() {
        if (a >= 0) ::close(a);
        if (b >= 0) ::close(b);
    }
};

// The descriptors one wait reports (0 ms: what is ready now, no waiting).
std::vector<int> ready_now(emu::Reactor& r) {
    epoll_event ev[16];
    const int n = r.wait(ev, 16, 0);
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) fds.push_back(ev[i].data.fd);
    return fds;
}

bool has(const std::vector<int>& v, int fd) { return std::find(v.begin(), v.end(), fd) != v.end(); }

}  // namespace

TEST(EmulatorReactor, InputIsReportedOnlyWhileWatchedAndUntilRead) {
    emu::Reactor r;
    Pair p;
    r.watch(p.a, true);
    EXPECT_FALSE(has(ready_now(r), p.a));  // nothing sent yet
    ASSERT_EQ(::write(p.b, "x", 1), 1);
    EXPECT_TRUE(has(ready_now(r), p.a));
    EXPECT_TRUE(has(ready_now(r), p.a));  // level-triggered: still there, unread
    char c;
    ASSERT_EQ(::read(p.a, &c, 1), 1);
    EXPECT_FALSE(has(ready_now(r), p.a));
    ASSERT_EQ(::write(p.b, "y", 1), 1);
    r.watch(p.a, false);  // a connection with a worker: not watched
    EXPECT_FALSE(has(ready_now(r), p.a));
}

TEST(EmulatorReactor, EndOfInputIsReadiness) {
    emu::Reactor r;
    Pair p;
    r.watch(p.a, true);
    ::shutdown(p.b, SHUT_WR);
    EXPECT_TRUE(has(ready_now(r), p.a));
}

TEST(EmulatorReactor, OutputWatchReportsWritableNotInput) {
    emu::Reactor r;
    Pair p;
    ASSERT_EQ(::write(p.b, "x", 1), 1);  // input waiting on p.a: not what an output watch reports
    // Fill p.a's send buffer: not writable until the peer reads.
    char block[4096] = {};
    while (::send(p.a, block, sizeof block, MSG_DONTWAIT) > 0) {
    }
    r.watch_output(p.a);
    EXPECT_FALSE(has(ready_now(r), p.a));
    while (::recv(p.b, block, sizeof block, MSG_DONTWAIT) > 0) {
    }
    EXPECT_TRUE(has(ready_now(r), p.a));
    r.unwatch(p.a);
    EXPECT_FALSE(has(ready_now(r), p.a));
}

TEST(EmulatorReactor, WakeFromAnotherThreadReturnsTheWaitUntilDrained) {
    emu::Reactor r;
    EXPECT_TRUE(ready_now(r).empty());
    std::thread t([&r] { r.wake(); });
    epoll_event ev[4];
    int n = 0;
    while (n <= 0) n = r.wait(ev, 4, -1);  // blocks until the wake (a hang is the failure)
    t.join();
    ASSERT_EQ(n, 1);
    EXPECT_TRUE(r.is_wake(ev[0].data.fd));
    r.wake();  // two wake-ups before the drain are one readiness
    auto fds = ready_now(r);
    ASSERT_EQ(fds.size(), 1u);
    r.drain_wake();
    EXPECT_TRUE(ready_now(r).empty());
}

TEST(EmulatorReactor, TheWakeDescriptorIsNoConnection) {
    emu::Reactor r;
    Pair p;
    EXPECT_FALSE(r.is_wake(p.a));
    EXPECT_FALSE(r.is_wake(p.b));
}
