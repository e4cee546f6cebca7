// What the bindings of the client core (client_bindings.cpp) and of the asyncio
// engine (engine_bindings.cpp) share: one conversion of each core object to Python.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>

#include "vehicledata/client/client.h"

namespace vehicledata::bindings {

// A cancellation another thread sets (vehicledata.vehicles: the part crawls of a call that failed or
// was interrupted); the interrupt check of the threads it is set on reads it (interrupt_requested).
struct CancelToken {
    std::atomic<bool> cancelled{false};
};

// The interrupt check of every blocking call: true when the calling thread's CancelToken is
// cancelled (no GIL taken), or when a Python signal handler raised (Ctrl-C's KeyboardInterrupt, or a
// program's own handler's exception), which the GIL is taken briefly to run; also when one raised
// earlier in the call while the client's logger ran Python code on this thread. The handler's
// exception is kept and raised as raised once the call unwinds with client::Interrupted (the
// module's exception translator); a cancelled thread gets concurrent.futures.CancelledError.
bool interrupt_requested();

// True once the interpreter is finalizing. A thread of ours (the asyncio engine's, the client's
// transfers) must not take the GIL then: CPython ends a thread that does with pthread_exit, whose
// unwinding through our noexcept frames is std::terminate ("terminate called without an active
// exception" when a daemon thread's AsyncClient crawl meets the interpreter's exit). Such a thread
// drops its result (nobody waits for it any more) and leaks the Python objects it holds.
bool python_finalizing();
// Route the client's log lines to `logger(level, message)` (None: none); the holder of `logger`.
std::shared_ptr<pybind11::object> attach_logger(client::Client& client, pybind11::object logger);
// The vehicledata.errors exception (or the Python exception) an error of the core stands for.
pybind11::object error_object(std::exception_ptr error);
// A raw answer: {status, url, content_type, http_version, body (bytes)}.
pybind11::dict response_dict(const client::Response& r);
// A download's result: {bytes, resumed, content_type}.
pybind11::dict download_dict(const client::DownloadResult& r);
// Text that leaves the client (messages, URLs): the secrets it holds (its API secret, its JWTs)
// become "***"; bytes that are not UTF-8 become replacement characters.
pybind11::str safe_text(const std::string& s);
// A client's counters: {requests, retries, logins, bytes, rate_wait_seconds, reorder_peak, cache_hits}.
pybind11::dict stats_dict(const client::ClientStats& s);

}  // namespace vehicledata::bindings
