// Client-side token bucket: keeps a crawl at the server's per-minute limit.
//
// Thread-safe (one mutex).  `reserve()` takes a token now and returns how long
// the caller must wait before using it, so waits can be spent driving other
// transfers instead of sleeping.
#pragma once

#include <chrono>
#include <mutex>

namespace vehicledata::client {

class TokenBucket {
public:
    // per_minute <= 0 disables the bucket (reserve() always returns 0).
    // The bucket holds up to `burst` tokens (burst < 0: kDefaultBurstShare of
    // per_minute, at least 1) and starts full, so a short run of requests (a
    // notebook query) goes out at once; it refills at
    // (per_minute * (1 - margin) - (burst - 1)) / 60 tokens per second, so that
    // no 60-second window ever holds more than per_minute requests.
    explicit TokenBucket(double per_minute = 0, double burst = -1, double margin = 0.01);

    // Default capacity as a share of the per-minute budget (600/min: 60 requests at once).
    static constexpr double kDefaultBurstShare = 0.1;

    double capacity() const { return capacity_; }

    bool enabled() const { return rate_ > 0; }
    double per_minute() const { return per_minute_; }
    // Take one token; seconds to wait before it may be used (0 if available).
    double reserve();
    // Return an unused reservation (e.g. a request that was never sent).
    void refund();

private:
    using Clock = std::chrono::steady_clock;
    std::mutex mutex_;
    double per_minute_;
    double rate_;       // tokens per second
    double capacity_;
    double tokens_;
    Clock::time_point last_;
};

}  // namespace vehicledata::client
