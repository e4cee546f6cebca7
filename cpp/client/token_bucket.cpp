// Token bucket: see vehicledata/client/token_bucket.h.
#include "vehicledata/client/token_bucket.h"

#include <algorithm>

namespace vehicledata::client {

TokenBucket::TokenBucket(double per_minute, double burst, double margin)
    : per_minute_(per_minute > 0 ? per_minute : 0),
      rate_(per_minute > 0 ? per_minute * (1.0 - margin) / 60.0 : 0),
      capacity_(std::max(1.0, burst)),
      tokens_(std::max(1.0, burst)),
      last_(Clock::now()) {}

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
