// Usage counters for /api/account/requests and /api/account/requests-today.
//
// Thread safety: safe to use from the server's worker threads at once (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vehicledata::emulator {

// Requests to rate-limited endpoints per account and day (UTC-5).
class UsageCounters {
public:
    void count(const std::string& account_id, std::int64_t now_seconds);
    std::int64_t today(const std::string& account_id, std::int64_t now_seconds) const;
    // Days from the first day of the previous month (UTC-5) to today, oldest
    // first, days without requests left out.
    std::vector<std::pair<std::string, std::int64_t>> since_last_month(const std::string& account_id,
                                                                       std::int64_t now_seconds) const;
    void reset();

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::map<std::int64_t, std::int64_t>> days_;  // account -> day -> count
};

}  // namespace vehicledata::emulator
