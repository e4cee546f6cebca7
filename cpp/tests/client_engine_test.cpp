// The asyncio face's I/O engine without Python: completions, errors, cancellation, stopping.
// The servers are loopback sockets: one that refuses (nothing listens) and one that accepts
// connections but never answers (a transfer that stays in flight until cancelled).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "vehicledata/client/engine.h"
#include "vehicledata/client/errors.h"
#include "vehicledata/schema.h"

namespace vc = vehicledata::client;
namespace sc = vehicledata::schema;

namespace {

// A listening socket that never accepts: connections complete (the backlog) and then hang.
struct SilentServer {
    int fd = -1;
    int port = 0;
    SilentServer() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(fd, 64);
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~SilentServer() { ::close(fd); }
};

// A port nothing listens on (bound, then closed).
int refused_port() {
    SilentServer s;
    return s.port;  // closed when s goes
}

vc::ClientOptions options(int port, double timeout = 30) {
    vc::ClientOptions o;
    o.base_url = "http://127.0.0.1:" + std::to_string(port);
    o.rate_limit = 0;
    o.retry.total = 0;
    o.transport.timeout = timeout;
    o.transport.connect_timeout = 5;
    return o;
}

struct Waiter {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    vc::Engine::Result result;
    vc::Engine::Completion completion() {
        return [this](vc::Engine::Result&& r) {
            std::lock_guard<std::mutex> lk(m);
            ++calls;
            result = std::move(r);
            cv.notify_all();
        };
    }
    bool wait(double seconds) {
        std::unique_lock<std::mutex> lk(m);
        return cv.wait_for(lk, std::chrono::duration<double>(seconds), [&] { return calls > 0; });
    }
};

vc::Engine::Job job(std::vector<std::string> targets, vc::Engine::Completion done) {
    vc::Engine::Job j;
    j.targets = std::move(targets);
    j.record = sc::find_record("make");
    j.shape = sc::Shape::Envelope;
    j.done = std::move(done);
    return j;
}

bool eventually(const std::function<bool()>& ok, double seconds = 5) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (ok()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return ok();
}

}  // namespace

TEST(ClientEngine, ATransferFailureCompletesWithTheClientsError) {
    vc::Engine engine(options(refused_port()));
    Waiter w;
    engine.submit(job({"/api/makes/v2", "/api/makes/v2?page=2"}, w.completion()));
    ASSERT_TRUE(w.wait(10));
    ASSERT_TRUE(w.result.error);
    EXPECT_THROW(std::rethrow_exception(w.result.error), vc::TransportError);
    EXPECT_TRUE(w.result.pages.empty());
    EXPECT_TRUE(eventually([&] { return engine.jobs() == 0; }));
}

TEST(ClientEngine, ATimeoutIsATransportErrorMarkedTimeout) {
    SilentServer silent;
    vc::Engine engine(options(silent.port, 0.3));
    Waiter w;
    engine.submit(job({"/api/makes/v2"}, w.completion()));
    ASSERT_TRUE(w.wait(10));
    try {
        std::rethrow_exception(w.result.error);
        FAIL() << "no error";
    } catch (const vc::TransportError& e) {
        EXPECT_TRUE(e.timeout) << e.what();
    }
}

TEST(ClientEngine, CancelRemovesTheTransfersAndNeverCompletes) {
    SilentServer silent;
    auto o = options(silent.port);
    o.max_parallel = 2;
    vc::Engine engine(o);
    Waiter cancelled, other;
    const auto id = engine.submit(job({"/a", "/b", "/c"}, cancelled.completion()));
    engine.submit(job({"/d"}, other.completion()));
    ASSERT_TRUE(eventually([&] { return engine.peak_transfers() == 2; }));  // the cap holds
    engine.cancel(id);
    EXPECT_TRUE(eventually([&] { return engine.jobs() == 1; }));
    // the second job's transfer starts once the first's are gone
    EXPECT_FALSE(cancelled.wait(0.3));
    EXPECT_EQ(cancelled.calls, 0);
    EXPECT_EQ(engine.peak_transfers(), 2u);
    engine.cancel(id);  // again: a no-op
    engine.cancel(12345);
}

TEST(ClientEngine, AJobsOwnParallelCapsOnlyItsTransfers) {
    SilentServer silent;
    auto o = options(silent.port);
    o.max_parallel = 4;
    vc::Engine engine(o);
    Waiter capped, other;
    auto j = job({"/a", "/b", "/c"}, capped.completion());
    j.parallel = 1;
    const auto id = engine.submit(std::move(j));
    ASSERT_TRUE(eventually([&] { return engine.peak_transfers() >= 1; }));
    EXPECT_EQ(engine.peak_transfers(), 1u);  // its other two wait for the first (which never answers)
    engine.submit(job({"/d", "/e"}, other.completion()));
    ASSERT_TRUE(eventually([&] { return engine.peak_transfers() >= 3; }));  // the next job is not held by it
    EXPECT_EQ(engine.peak_transfers(), 3u);
    engine.cancel(id);
}

TEST(ClientEngine, StoppingDropsRunningJobsWithoutTheirCompletion) {
    SilentServer silent;
    Waiter w;
    {
        vc::Engine engine(options(silent.port));
        engine.submit(job({"/a"}, w.completion()));
        ASSERT_TRUE(eventually([&] { return engine.peak_transfers() == 1; }));
        const auto started = std::chrono::steady_clock::now();
        engine.stop();
        EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
    }
    EXPECT_EQ(w.calls, 0);
}

TEST(ClientEngine, StoppedFromItsOwnThreadItCallsNoMoreCompletions) {
    // A completion (as the logger, or a finalizer run there) stops the engine on its own thread:
    // stop() returns there without waiting for itself, and no completion is called after it
    // (the loops awaiting them may be closed next); the destructor then runs on this thread.
    auto o = options(refused_port());
    o.max_parallel = 8;  // every job's transfer at once: they fail in the same rounds
    auto engine = std::make_unique<vc::Engine>(o);
    std::atomic<bool> stop_returned{false};
    std::atomic<int> stopping_calls{0}, other_calls{0}, after_stop{0};
    engine->submit(job({"/a"}, [&](vc::Engine::Result&&) {
        ++stopping_calls;
        engine->stop();
        stop_returned = true;
    }));
    for (int i = 0; i < 6; ++i)
        engine->submit(job({"/b"}, [&](vc::Engine::Result&&) {
            ++other_calls;
            if (stop_returned) ++after_stop;
        }));
    ASSERT_TRUE(eventually([&] { return stop_returned.load(); }, 10));
    engine.reset();  // joins the engine thread, here
    EXPECT_EQ(stopping_calls.load(), 1);
    EXPECT_EQ(after_stop.load(), 0) << other_calls.load() << " other completions";
}

TEST(ClientEngine, AnEmptyJobCompletesAtOnce) {
    vc::Engine engine(options(refused_port()));
    Waiter w;
    engine.submit(job({}, w.completion()));
    ASSERT_TRUE(w.wait(5));
    EXPECT_FALSE(w.result.error);
    EXPECT_TRUE(w.result.pages.empty());
}
