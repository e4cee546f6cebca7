// Usage counters: requests per account and UTC-5 day.
#include "usage.h"
#include "vehicledata/format.h"

namespace vehicledata::emulator {

namespace {
std::int64_t day_of(std::int64_t now_seconds) {
    std::int64_t t = now_seconds - 5 * 3600;
    return t / 86400 - ((t % 86400 != 0) && (t < 0));
}
}  // namespace

void UsageCounters::count(const std::string& account_id, std::int64_t now_seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++days_[account_id][day_of(now_seconds)];
}

std::int64_t UsageCounters::today(const std::string& account_id, std::int64_t now_seconds) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = days_.find(account_id);
    if (it == days_.end()) return 0;
    auto d = it->second.find(day_of(now_seconds));
    return d == it->second.end() ? 0 : d->second;
}

std::vector<std::pair<std::string, std::int64_t>> UsageCounters::since_last_month(const std::string& account_id,
                                                                                  std::int64_t now_seconds) const {
    const std::int64_t today = day_of(now_seconds);
    int y;
    unsigned m, d;
    format::civil_from_days(today, y, m, d);
    if (m == 1) {
        m = 12;
        --y;
    } else {
        --m;
    }
    const std::int64_t from = format::days_from_civil(y, m, 1);
    std::vector<std::pair<std::string, std::int64_t>> out;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = days_.find(account_id);
    if (it == days_.end()) return out;
    for (auto d_it = it->second.lower_bound(from); d_it != it->second.end() && d_it->first <= today; ++d_it)
        out.emplace_back(format::date_string(d_it->first), d_it->second);
    return out;
}

void UsageCounters::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    days_.clear();
}

}  // namespace vehicledata::emulator
