// The order and timing of one crawl's requests: which target may start now, when to wake for a
// retry, and the window that bounds how far past the first undelivered page a crawl may run. The
// one home of that decision for both drivers, Client::fetch_pages (a blocking crawl) and Engine
// (the asyncio face's engine thread); they perform the I/O it asks for (tokens, transfers,
// retries' delays) and tell it what happened. Pure state over an injected clock: no I/O, no
// threads; one scheduler per crawl, used by one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

namespace vehicledata::client {

class PageScheduler {
public:
    using Clock = std::chrono::steady_clock;

    // `targets` targets, all pending in order. `window` 0: no bound; else target i starts only
    // while i < frontier() + window (frontier: the first target not yet delivered).
    PageScheduler(std::size_t targets, std::size_t window);

    // The target to start at `now`: the first pending one that is due (its retry delay over) and
    // inside the window, taken out of the queue; nullopt when none is. `wake_ms` is lowered to the
    // milliseconds until the first pending retry inside the window falls due (+1).
    std::optional<std::size_t> take_due(Clock::time_point now, int& wake_ms);
    // A target taken but not started (no token yet): first in the queue again, due as it was.
    void put_back(std::size_t target);
    // A target whose answer is to be asked again at `due` (a retry): first in the queue.
    void retry_at(std::size_t target, Clock::time_point due);
    // A target settled (its page handed over, or refused and passed): the frontier moves past it.
    void delivered(std::size_t target);
    // A pending target settled without a request (a cached answer): out of the queue, delivered.
    void delivered_pending(std::size_t target);

    std::size_t size() const { return due_.size(); }
    std::size_t done() const { return done_; }
    bool finished() const { return done_ == due_.size(); }
    bool nothing_pending() const { return pending_.empty(); }
    std::size_t frontier() const { return frontier_; }
    bool in_window(std::size_t target) const { return window_ == 0 || target < frontier_ + window_; }

private:
    std::vector<Clock::time_point> due_;  // per target: not before (a retry's delay)
    std::vector<bool> delivered_;
    std::deque<std::size_t> pending_;     // not started (or to be started again), in order
    std::size_t window_;
    std::size_t frontier_ = 0;
    std::size_t done_ = 0;
};

}  // namespace vehicledata::client
