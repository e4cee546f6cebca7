// The control plane's scheduled faults and the request statistics of GET /_emulator/stats.
//
// Thread safety: safe to use from the server's worker threads at once (one mutex each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vehicledata::emulator {

enum class FaultAction { Status, Drop, Truncate, Delay };

struct Fault {
    std::string path;              // prefix of the request path
    int count = 1;                 // requests left to affect
    int status = 503;
    int retry_after = -1;          // seconds for Retry-After; -1: no header
    std::optional<std::string> body;
    int delay_ms = 0;
    FaultAction action = FaultAction::Status;
};

// Bounds of the control plane's faults: scheduled at once, and the size of a fault's body.
inline constexpr std::size_t kMaxFaults = 1000;
inline constexpr std::size_t kMaxFaultBody = 65536;

// Parses the control plane's fault JSON; throws std::invalid_argument naming the problem.
Fault parse_fault(std::string_view json_text);

class Faults {
public:
    // Throws std::invalid_argument past kMaxFaults.
    void add(Fault f);
    void clear();
    // Takes one use of the first fault whose path prefixes `path`.
    std::optional<Fault> take(std::string_view path);
    std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::vector<Fault> faults_;
};

// Request counts for GET /_emulator/stats (control plane excluded).
class Stats {
public:
    void record(const std::string& path, int status);
    std::string to_json() const;
    void reset();

private:
    mutable std::mutex mutex_;
    std::int64_t total_ = 0;
    std::map<std::string, std::int64_t> by_path_;
    std::map<int, std::int64_t> by_status_;
};

}  // namespace vehicledata::emulator
