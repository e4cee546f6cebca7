// Rate limits: the sliding request window per account (and per address for login).
// (Not named limits.h: the emulator's include directory must not shadow <limits.h>.)
//
// Thread safety: safe to use from the server's worker threads at once (sharded mutexes).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace vehicledata::emulator {

// Sliding-window request limiter: at most `limit` hits per key in any
// `window_ms` interval.  Rejected hits are not recorded.
class RateLimiter {
public:
    explicit RateLimiter(std::int64_t window_ms) : window_ms_(window_ms) {}
    // Records a hit if allowed.  Otherwise returns false and sets
    // retry_after_seconds (>= 1) to when the oldest hit leaves the window.
    bool hit(const std::string& key, int limit, std::int64_t now_ms, int& retry_after_seconds);
    void reset();

private:
    static constexpr int kShards = 16;
    struct Shard {
        std::mutex mutex;
        std::unordered_map<std::string, std::deque<std::int64_t>> hits;
    };
    std::int64_t window_ms_;
    Shard shards_[kShards];
};

}  // namespace vehicledata::emulator
