// The types every handler shares: a routed request (Route, Call), an error answer (HttpError),
// and the readers of a call's parameters and access.
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
// text errors (login, data feed download), the message as text/plain. Answers are
// written from `message`, kept whole: what() stops at a NUL byte that a message
// quoting a request value may hold.
class HttpError : public std::runtime_error {
public:
    HttpError(int status, std::string exception, const std::string& message)
        : std::runtime_error(message), status(status), exception(std::move(exception)), message(message) {}
    int status;
    std::string exception;
    std::string message;
};

// A matched route: the schema's endpoint (its kind picks the handler) and the path parameter.
struct Route {
    schema::Kind kind = schema::Kind::Search;
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
    std::string_view if_range; // the If-Range header; likewise
};

// The query parameter `name` of the call, or nullptr when absent or empty.
const format::QueryParam* param(const Call& call, std::string_view name);
// A yes/no parameter: false when absent; 400 BadRequestException unless "yes" or "no".
bool yes_no(const Call& call, std::string_view name);
// True when the caller may see the whole data-set (a valid JWT of a subscribed account);
// otherwise every data endpoint serves the demo data-set only.
bool full_access(const Call& call);
// The service's 400 answer.
HttpError bad_request(const std::string& message);

}  // namespace vehicledata::emulator
