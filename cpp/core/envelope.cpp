// The wire envelope (see envelope.h).
#include "vehicledata/envelope.h"

#include <simdjson.h>

#include <stdexcept>

#include "vehicledata/format.h"
#include "vehicledata/schema.h"

namespace vehicledata::envelope {

namespace {

// Where each member of the structs is kept, by wire name; the order and the set
// of names are the schema record's (bind() checks both ways).
const Member<Collection> kCollectionSlots[] = {
    {"url", &Collection::url, nullptr},     {"count", nullptr, &Collection::count},
    {"pages", nullptr, &Collection::pages}, {"total", nullptr, &Collection::total},
    {"next", &Collection::next, nullptr},   {"prev", &Collection::prev, nullptr},
    {"first", &Collection::first, nullptr}, {"last", &Collection::last, nullptr},
};
const Member<ErrorBody> kErrorSlots[] = {
    {"exception", &ErrorBody::exception, nullptr},
    {"code", nullptr, &ErrorBody::code},
    {"url", &ErrorBody::url, nullptr},
    {"message", &ErrorBody::message, nullptr},
};

bool is_text(schema::Type t) { return t == schema::Type::String; }
bool is_number(schema::Type t) { return t == schema::Type::Int || t == schema::Type::Int64; }

// The schema record's fields in order, each bound to its slot.
template <class T, std::size_t N>
std::vector<Member<T>> bind(const char* record_name, const Member<T> (&slots)[N]) {
    const schema::Record* record = schema::find_record(record_name);
    if (!record) throw std::logic_error(std::string("envelope: the schema table has no record '") + record_name + "'");
    std::vector<Member<T>> out;
    for (const schema::Field& f : record->fields) {
        const Member<T>* slot = nullptr;
        for (const auto& s : slots)
            if (s.name == f.name) slot = &s;
        if (!slot || (slot->text ? !is_text(f.type) : !is_number(f.type)))
            throw std::logic_error("envelope: field '" + f.name + "' of schema record '" + record_name +
                                   "' has no member of its type");
        out.push_back(*slot);
    }
    if (out.size() != N)
        throw std::logic_error(std::string("envelope: schema record '") + record_name + "' lacks a member");
    return out;
}

template <class T>
void append_members(std::string& out, const T& v, const std::vector<Member<T>>& members) {
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

// ---- collection --------------------------------------------------------------------------
const std::vector<Member<Collection>>& collection_members() {
    static const std::vector<Member<Collection>> members = bind("collection", kCollectionSlots);
    return members;
}

void begin_collection(std::string& out, const Collection& c) {
    out.append("{\"collection\":");
    append_members(out, c, collection_members());
    out.append(",\"data\":[");
}

void end_collection(std::string& out) { out.append("]}"); }

const Member<Collection>* collection_member(std::string_view key) {
    for (const auto& m : collection_members())
        if (m.name == key) return &m;
    return nullptr;
}

// ---- error body ----------------------------------------------------------------------------
const std::vector<Member<ErrorBody>>& error_members() {
    static const std::vector<Member<ErrorBody>> members = bind("error", kErrorSlots);
    return members;
}

std::string error_json(const ErrorBody& e) {
    std::string out;
    out.reserve(128 + e.message.size() + e.url.size());
    append_members(out, e, error_members());
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
    ErrorBody e;
    const std::string body = format::valid_utf8(raw_body);
    if (looks_json(content_type, body)) {
        simdjson::dom::parser parser;
        simdjson::dom::element doc;
        if (!parser.parse(body).get(doc) && doc.is_object()) {
            for (const auto& m : error_members()) {
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
