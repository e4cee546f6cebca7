// Errors thrown by the client core.  The pybind11 bindings translate each one
// into the matching class of python/vehicledata/errors.py.  Messages never
// contain the API secret or a JWT.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace vehicledata::client {

// Base: every client failure carries the URL it concerns (may be empty).
class ClientError : public std::runtime_error {
public:
    ClientError(const std::string& message, std::string url) : std::runtime_error(message), url(std::move(url)) {}
    std::string url;
};

// The server answered with an error status.
class ApiError : public ClientError {
public:
    ApiError(int status, std::string exception, const std::string& message, std::string url,
             std::optional<double> retry_after = std::nullopt)
        : ClientError(message, std::move(url)), status(status), exception(std::move(exception)),
          retry_after(retry_after) {}
    int status;
    std::string exception;              // the server's exception name ("" if none)
    std::optional<double> retry_after;  // seconds, from Retry-After
};

// No usable answer: connection refused/reset, TLS, truncated transfer.
class TransportError : public ClientError {
public:
    TransportError(const std::string& message, std::string url, bool timeout = false, int curl_code = 0)
        : ClientError(message, std::move(url)), timeout(timeout), curl_code(curl_code) {}
    bool timeout;
    int curl_code;
};

// A body that is not what the service sends.
class DecodeError : public ClientError {
public:
    DecodeError(const std::string& message, std::string url, std::size_t position = npos)
        : ClientError(message, std::move(url)), position(position) {}
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::size_t position;
};

// Paging links that repeat or contradict each other.
class PaginationError : public ClientError {
public:
    using ClientError::ClientError;
};

// A limit of the client's options was exceeded (max_body, max_decompressed,
// max_pages): the answer is refused before it can exhaust memory.  `limit`
// names the option.
class LimitError : public ClientError {
public:
    LimitError(const std::string& message, std::string url, std::string limit)
        : ClientError(message, std::move(url)), limit(std::move(limit)) {}
    std::string limit;
};

// The wait was interrupted by the caller's interrupt check (Ctrl-C).
class Interrupted : public std::runtime_error {
public:
    Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace vehicledata::client
