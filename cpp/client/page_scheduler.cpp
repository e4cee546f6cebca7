// The order and timing of one crawl's requests: see vehicledata/client/page_scheduler.h.
#include "vehicledata/client/page_scheduler.h"

#include <algorithm>

namespace vehicledata::client {

PageScheduler::PageScheduler(std::size_t targets, std::size_t window)
    : due_(targets), delivered_(targets, false), window_(window) {
    for (std::size_t i = 0; i < targets; ++i) pending_.push_back(i);
}

std::optional<std::size_t> PageScheduler::take_due(Clock::time_point now, int& wake_ms) {
    std::optional<std::size_t> found;
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
        const std::size_t k = *it;
        if (!in_window(k)) continue;
        if (due_[k] <= now) {
            if (!found) {
                found = k;
                pending_.erase(it);
                break;
            }
        } else {  // wake for the first retry due inside the window
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(due_[k] - now).count() + 1;
            wake_ms = std::min<int>(wake_ms, static_cast<int>(ms));
        }
    }
    return found;
}

void PageScheduler::put_back(std::size_t target) { pending_.push_front(target); }

void PageScheduler::retry_at(std::size_t target, Clock::time_point due) {
    due_[target] = due;
    pending_.push_front(target);
}

void PageScheduler::delivered(std::size_t target) {
    if (delivered_[target]) return;
    delivered_[target] = true;
    ++done_;
    while (frontier_ < delivered_.size() && delivered_[frontier_]) ++frontier_;
}

void PageScheduler::delivered_pending(std::size_t target) {
    auto it = std::find(pending_.begin(), pending_.end(), target);
    if (it != pending_.end()) pending_.erase(it);
    delivered(target);
}

}  // namespace vehicledata::client
