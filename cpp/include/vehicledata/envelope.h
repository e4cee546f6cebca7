// The service's wire envelope, written by the emulator and read by the client:
// the paging block of a collection ({"collection": {...}, "data": [...]}) and
// the error body ({"exception", "code", "url", "message"}, or text/plain).
// Member names, order and types are those of the schema table's `collection`
// and `error` records (cpp/core/schema.cpp, docs/resources.md; check_schema()
// compares them); the exception names the service sends are the constants below
// (exported to Python as vehicledata._core.envelope).
// Pure functions without global state: call them from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vehicledata::envelope {

// ---- exception names (docs/client.md, "Errors") -------------------------------------
inline constexpr char kBadRequest[] = "BadRequestException";
inline constexpr char kUnauthorized[] = "UnauthorizedException";
inline constexpr char kUnauthenticated[] = "UnauthenticatedException";  // 500: a missing or rejected JWT
inline constexpr char kForbidden[] = "ForbiddenException";
inline constexpr char kDeprecated[] = "DeprecatedException";            // 403 on a deprecated path
inline constexpr char kNotFound[] = "NotFoundException";
inline constexpr char kRecordNotFound[] = "RecordNotFoundException";    // 404 of a detail endpoint
inline constexpr char kMethodNotAllowed[] = "MethodNotAllowedException";
inline constexpr char kRequestTimeout[] = "RequestTimeoutException";
inline constexpr char kPayloadTooLarge[] = "PayloadTooLargeException";
inline constexpr char kUriTooLong[] = "UriTooLongException";
inline constexpr char kRangeNotSatisfiable[] = "RangeNotSatisfiableException";
inline constexpr char kRequestHeaderFieldsTooLarge[] = "RequestHeaderFieldsTooLargeException";
inline constexpr char kTooManyRequests[] = "TooManyRequestsException";
inline constexpr char kInternalError[] = "InternalErrorException";
inline constexpr char kNotImplemented[] = "NotImplementedException";
inline constexpr char kBadGateway[] = "BadGatewayException";
inline constexpr char kServiceUnavailable[] = "ServiceUnavailableException";
inline constexpr char kGatewayTimeout[] = "GatewayTimeoutException";
inline constexpr char kHttp[] = "HttpException";  // any other status

// Every name above, once each (for the bindings and tests).
const std::vector<const char*>& exception_names();
// The exception name the service sends with an HTTP error status (kHttp for an
// unlisted one).
const char* exception_for(int status);

// ---- collection ---------------------------------------------------------------------
// The paging block of a collection envelope ("" / 0 where absent).
struct Collection {
    bool present = false;  // reader: the envelope had a collection member
    std::string url, next, prev, first, last;
    std::int64_t count = 0, pages = 0, total = 0;
};

// A member of an envelope struct T: its name on the wire and where it is kept
// (exactly one of text and number is set).
template <class T>
struct Member {
    std::string_view name;
    std::string T::*text = nullptr;
    std::int64_t T::*number = nullptr;
};

// The members in the order of the schema record `collection` (check_schema()
// compares them with it; the writers call it once, envelope_test.cpp too).
inline constexpr Member<Collection> kCollectionMembers[] = {
    {"url", &Collection::url, nullptr},     {"count", nullptr, &Collection::count},
    {"pages", nullptr, &Collection::pages}, {"total", nullptr, &Collection::total},
    {"next", &Collection::next, nullptr},   {"prev", &Collection::prev, nullptr},
    {"first", &Collection::first, nullptr}, {"last", &Collection::last, nullptr},
};

// Writer: appends `{"collection":{...},"data":[`; the caller appends the records
// (comma-separated) and then end_collection (`]}`).  Strings are escaped as the
// service's PHP encoder does (format::JsonEscape::Php).
void begin_collection(std::string& out, const Collection& c);
void end_collection(std::string& out);

// Reader (the page decoder streams the envelope and asks per key): the member
// a key of the collection object names, or nullptr for a key to skip.  Inline:
// the decoder's hot path compares against the constant names.
inline const Member<Collection>* collection_member(std::string_view key) {
    for (const auto& m : kCollectionMembers)
        if (m.name == key) return &m;
    return nullptr;
}

// ---- error body ------------------------------------------------------------------------
struct ErrorBody {
    std::string exception;   // "" when the body names none
    std::int64_t code = 0;   // 0 when absent
    std::string url;
    std::string message;
};

// The members in the order of the schema record `error`.
inline constexpr Member<ErrorBody> kErrorMembers[] = {
    {"exception", &ErrorBody::exception, nullptr},
    {"code", nullptr, &ErrorBody::code},
    {"url", &ErrorBody::url, nullptr},
    {"message", &ErrorBody::message, nullptr},
};

// Throws std::logic_error when kCollectionMembers or kErrorMembers and the schema
// table's records `collection` and `error` disagree (names, order, types).
void check_schema();

// Writer: the JSON error body, members in the schema record's order.
std::string error_json(const ErrorBody& e);
// Writer: the body the live service was seen to send on a deprecated path:
// exception, message and code, in that order (no url; docs/emulator.md).
std::string deprecated_json(const ErrorBody& e);
// Writer: a text/plain error body (login and data feed routes): the message,
// ill-formed UTF-8 replaced by U+FFFD.
std::string error_text(const ErrorBody& e);

// Reader: a JSON body (content type naming json, or a body starting with '{')
// whose exception or message is a string gives those members (code and url when
// they have their type).  Anything else (text, malformed or foreign JSON) gives
// its first 1000 bytes, trailing blanks trimmed, as the message, and the
// exception name a text body starts with ("TooManyRequestsException - ...").
// Ill-formed UTF-8 becomes U+FFFD, so the message always converts to text.
ErrorBody read_error(std::string_view body, std::string_view content_type);

}  // namespace vehicledata::envelope
