// Sliding-window rate limiter.
#include <functional>

#include "rate_limiter.h"

namespace vehicledata::emulator {

bool RateLimiter::hit(const std::string& key, int limit, std::int64_t now_ms, int& retry_after_seconds) {
    Shard& shard = shards_[std::hash<std::string>{}(key) % kShards];
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto& q = shard.hits[key];
    while (!q.empty() && q.front() <= now_ms - window_ms_) q.pop_front();
    // A clock shifted backwards leaves hits "in the future": they still count.
    if (static_cast<int>(q.size()) >= limit) {
        std::int64_t wait_ms = q.front() + window_ms_ - now_ms;
        if (wait_ms < 1) wait_ms = 1;
        retry_after_seconds = static_cast<int>((wait_ms + 999) / 1000);
        return false;
    }
    q.push_back(now_ms);
    return true;
}

void RateLimiter::reset() {
    for (auto& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.hits.clear();
    }
}

}  // namespace vehicledata::emulator
