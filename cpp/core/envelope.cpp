// The wire envelope (see envelope.h).
#include "vehicledata/envelope.h"

#include <simdjson.h>

#include <stdexcept>

#include "vehicledata/format.h"
#include "vehicledata/schema.h"

namespace vehicledata::envelope {

namespace {

bool is_text(schema::Type t) { return t == schema::Type::String; }
bool is_number(schema::Type t) { return t == schema::Type::Int || t == schema::Type::Int64; }

// The members of T against the schema record of that name: same names, order and types.
template <class T, std::size_t N>
void check_record(const char* record_name, const Member<T> (&members)[N]) {
    const schema::Record* record = schema::find_record(record_name);
    if (!record) throw std::logic_error(std::string("envelope: the schema table has no record '") + record_name + "'");
    bool same = record->fields.size() == N;
    for (std::size_t i = 0; same && i < N; ++i) {
        const schema::Field& f = record->fields[i];
        same = f.name == members[i].name && (members[i].text ? is_text(f.type) : is_number(f.type));
    }
    if (!same)
        throw std::logic_error(std::string("envelope: the members of '") + record_name +
                               "' differ from the schema record's fields (cpp/core/schema.cpp)");
}

// The schema is checked once, on the first body written or read.
void ensure_checked() {
    static const bool checked = (check_schema(), true);
    (void)checked;
}

template <class T, std::size_t N>
void append_members(std::string& out, const T& v, const Member<T> (&members)[N]) {
    char sep = '{';
    for (const auto& m : members) {
        out.push_back(sep);
        sep = ',';
        out.push_back('"');
        out.append(m.name);
        out.append("\":");
        if (m.text) format::append_json_string(out, v.*m.text);
        else format::append_int(out, v.*m.number);
    }
    out.push_back('}');
}

bool looks_json(std::string_view content_type, std::string_view body) {
    if (content_type.find("json") != std::string_view::npos) return true;
    for (char c : body) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        return c == '{';
    }
    return false;
}

}  // namespace

// ---- exception names ---------------------------------------------------------------------
const std::vector<const char*>& exception_names() {
    static const std::vector<const char*> names = {
        kBadRequest,      kUnauthorized,       kUnauthenticated,      kForbidden,
        kDeprecated,      kNotFound,           kRecordNotFound,       kMethodNotAllowed,
        kRequestTimeout,  kPayloadTooLarge,    kUriTooLong,           kRangeNotSatisfiable,
        kRequestHeaderFieldsTooLarge,          kTooManyRequests,      kInternalError,
        kNotImplemented,  kBadGateway,         kServiceUnavailable,   kGatewayTimeout,
        kHttp};
    return names;
}

const char* exception_for(int status) {
    switch (status) {
        case 400: return kBadRequest;
        case 401: return kUnauthorized;
        case 403: return kForbidden;
        case 404: return kNotFound;
        case 405: return kMethodNotAllowed;
        case 408: return kRequestTimeout;
        case 413: return kPayloadTooLarge;
        case 414: return kUriTooLong;
        case 416: return kRangeNotSatisfiable;
        case 431: return kRequestHeaderFieldsTooLarge;
        case 429: return kTooManyRequests;
        case 500: return kInternalError;
        case 502: return kBadGateway;
        case 503: return kServiceUnavailable;
        case 504: return kGatewayTimeout;
        default: return kHttp;
    }
}

void check_schema() {
    check_record("collection", kCollectionMembers);
    check_record("error", kErrorMembers);
}

// ---- collection --------------------------------------------------------------------------
void begin_collection(std::string& out, const Collection& c) {
    ensure_checked();
    out.append("{\"collection\":");
    append_members(out, c, kCollectionMembers);
    out.append(",\"data\":[");
}

void end_collection(std::string& out) { out.append("]}"); }

// ---- error body ----------------------------------------------------------------------------
std::string error_json(const ErrorBody& e) {
    ensure_checked();
    std::string out;
    out.reserve(128 + e.message.size() + e.url.size());
    append_members(out, e, kErrorMembers);
    return out;
}

std::string deprecated_json(const ErrorBody& e) {
    std::string out = "{\"exception\":";
    format::append_json_string(out, e.exception);
    out.append(",\"message\":");
    format::append_json_string(out, e.message);
    out.append(",\"code\":");
    format::append_int(out, e.code);
    out.push_back('}');
    return out;
}

std::string error_text(const ErrorBody& e) { return format::valid_utf8(e.message); }

ErrorBody read_error(std::string_view raw_body, std::string_view content_type) {
    ensure_checked();
    ErrorBody e;
    const std::string body = format::valid_utf8(raw_body);
    if (looks_json(content_type, body)) {
        simdjson::dom::parser parser;
        simdjson::dom::element doc;
        if (!parser.parse(body).get(doc) && doc.is_object()) {
            for (const auto& m : kErrorMembers) {
                simdjson::dom::element v;
                if (doc[m.name].get(v)) continue;
                std::string_view s;
                std::int64_t n;
                if (m.text && !v.get_string().get(s)) e.*m.text = std::string(s);
                else if (m.number && !v.get_int64().get(n)) e.*m.number = n;
            }
            if (!e.exception.empty() || !e.message.empty()) return e;
            e = ErrorBody();
        }
    }
    std::string text = body.substr(0, 1000);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    e.message = text;
    // Text bodies of the service start with the exception name: "TooManyRequestsException - ..."
    const auto dash = text.find(" - ");
    if (dash != std::string::npos && dash > 0) {
        const std::string_view head = std::string_view(text).substr(0, dash);
        if (head.find(' ') == std::string_view::npos && head.find("Exception") != std::string_view::npos)
            e.exception = std::string(head);
    }
    return e;
}

}  // namespace vehicledata::envelope
