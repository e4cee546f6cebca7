// The types every handler shares: a routed request (Route, Call) and an error answer (HttpError).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth.h"
#include "vehicledata/format.h"
#include "vehicledata/schema.h"

namespace vehicledata::emulator {

// An error answer: JSON {exception, code, url, message} or, on routes with
// text errors (login, data feed download), the message as text/plain.
class HttpError : public std::runtime_error {
public:
    HttpError(int status, std::string exception, const std::string& message)
        : std::runtime_error(message), status(status), exception(std::move(exception)) {}
    int status;
    std::string exception;
};

enum class RouteKind {
    Login, AccountRequests, AccountToday, FeedDownload, FeedLastUpdated,
    Search, Years, TrimDetail, TrimLegacyDetail, ObdDetail, Attributes, Vin, LicensePlate,
};

struct Route {
    RouteKind kind = RouteKind::Search;
    const schema::Endpoint* endpoint = nullptr;
    std::string arg;            // path parameter ({id}, {code}, {vin}), decoded
    const char* method = "GET";
    bool text_errors = false;   // login and data feed download answer errors as text/plain
    bool rate_limited = true;
};

struct Call {
    const Route* route = nullptr;
    std::string_view target;   // request target as sent (path and query)
    std::string_view path;     // decoded path
    std::vector<format::QueryParam> params;  // in order; a repeated name keeps its first place and last value
    Identity identity;
    std::string_view body;
    std::string_view remote_addr;
    std::string_view range;    // the Range header; set only for the data feed download
};

}  // namespace vehicledata::emulator
