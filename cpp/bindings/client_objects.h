// What the bindings of the client core (client_bindings.cpp) and of the asyncio
// engine (engine_bindings.cpp) share: one conversion of each core object to Python.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <memory>
#include <string>

#include "vehicledata/client/client.h"

namespace vehicledata::bindings {

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
