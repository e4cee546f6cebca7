// The control plane (/_emulator/*: health, reset, faults, maintenance, clock, touch, stats) and
// the connection drop of a `drop` fault.
#pragma once

#include <httplib.h>

#include <atomic>

#include "auth.h"
#include "faults.h"
#include "gate.h"
#include "rate_limiter.h"
#include "response_cache.h"
#include "store.h"
#include "usage.h"

namespace vehicledata::emulator {

// The server state the control plane reads and resets.
struct ControlState {
    Clock& clock;
    Store& store;
    RateLimiter& limiter;
    RateLimiter& login_limiter;
    UsageCounters& usage;
    Faults& faults;
    Stats& stats;
    std::atomic<bool>& maintenance;
    ResponseCache& response_cache;  // cleared by the server after every control request but GET
    const Gate& gate;               // its figures in GET /_emulator/stats ("gate")
};

// Answers a control-plane request (the caller has checked control access).
void control(ControlState& state, const httplib::Request& req, httplib::Response& res);

// Closes the connection of a request at once (no response), by finding its
// socket among the process's descriptors.  Returns false if not found.
bool drop_connection(const httplib::Request& req);

}  // namespace vehicledata::emulator
