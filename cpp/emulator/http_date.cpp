// The Date and Allow headers (see http_date.h).
#include "http_date.h"

#include <cstdio>
#include <cstring>
#include <ctime>

namespace vehicledata::emulator {

const std::string& http_date(std::int64_t unix_seconds) {
    thread_local std::int64_t cached = -1;
    thread_local std::string text;
    if (unix_seconds == cached) return text;
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[40];
    const int n = std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday % 7],
                                tm.tm_mday, kMonths[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                                tm.tm_sec);
    text.assign(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    cached = unix_seconds;
    return text;
}

const char* allow_header(const char* method) { return std::strcmp(method, "GET") == 0 ? "GET, HEAD" : method; }

}  // namespace vehicledata::emulator
