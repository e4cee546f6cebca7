// Token bucket: see vehicledata/client/token_bucket.h.
#include "vehicledata/client/token_bucket.h"

#include <algorithm>

namespace vehicledata::client {

namespace {

double capacity_for(double per_minute, double burst) {
    if (per_minute <= 0) return 1.0;
    if (burst < 0) burst = per_minute * TokenBucket::kDefaultBurstShare;
    // At most half of the budget up front, so the refill rate stays positive.
    return std::max(1.0, std::min(burst, per_minute / 2));
}

}  // namespace

TokenBucket::TokenBucket(double per_minute, double burst, double margin)
    : per_minute_(per_minute > 0 ? per_minute : 0),
      rate_(0),
      capacity_(capacity_for(per_minute, burst)),
      tokens_(capacity_),
      last_(Clock::now()) {
    if (per_minute > 0) rate_ = std::max(per_minute * (1.0 - margin) - (capacity_ - 1.0), 1.0) / 60.0;
}

double TokenBucket::reserve() {
    if (rate_ <= 0) return 0.0;
    std::lock_guard<std::mutex> lk(mutex_);
    auto now = Clock::now();
    double elapsed = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min(capacity_, tokens_ + elapsed * rate_);
    tokens_ -= 1.0;
    if (tokens_ >= 0) return 0.0;
    return -tokens_ / rate_;
}

void TokenBucket::refund() {
    if (rate_ <= 0) return;
    std::lock_guard<std::mutex> lk(mutex_);
    tokens_ = std::min(capacity_, tokens_ + 1.0);
}

}  // namespace vehicledata::client
