// Every use the emulator makes of cpp-httplib beyond its public API, in one place (the design
// review in ARCHITECTURE.md: the gate reaches into httplib's internals). Written against
// cpp-httplib 0.11 as Debian ships it (libcpp-httplib-dev: a split build, the definitions in
// libcpp-httplib.so); another version fails to compile here, at the version check, until each
// item below has been checked against it:
//   - Server::process_request (protected): the per-request processing the gate hands a framed
//     request to, and the members it reads (svr_sock_: shutting down; the keep-alive settings);
//   - httplib::detail functions the library exports but its header does not declare
//     (status_message, decode_url) or declares for its own use (parse_range_header);
//   - Response's content-provider fields (content_length_, content_provider_,
//     is_chunked_content_provider_, content_provider_success_), and the Request httplib hands
//     handlers as const but owns (not const): the server clears its ranges and its
//     Accept-Encoding.
//
// Thread safety: none of its own; as httplib's objects.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>

#ifndef CPPHTTPLIB_VERSION
#error "cpp-httplib without CPPHTTPLIB_VERSION: check httplib_adapter.h against it"
#endif

namespace vehicledata::emulator {

namespace adapter_detail {
constexpr bool starts_with(const char* s, const char* prefix) {
    return *prefix == '\0' || (*s == *prefix && starts_with(s + 1, prefix + 1));
}
}  // namespace adapter_detail
static_assert(adapter_detail::starts_with(CPPHTTPLIB_VERSION, "0.11."),
              "cpp-httplib other than 0.11: check every item of httplib_adapter.h against it first");

// httplib::Server with its per-request processing opened to the gate.
// httplib checks its own listening socket to tell whether it is shutting down
// (content providers stop writing then), so the gate lends it its own.
class HttpCore : public httplib::Server {
public:
    using httplib::Server::process_request;
    void set_listening_socket(int fd) { svr_sock_ = fd; }
    // What the direct path (direct.h) needs of httplib's settings: content providers stop once the
    // server shuts down, and the Keep-Alive header's timeout (the server sets it to the gate's idle
    // timeout).
    bool shutting_down() const { return svr_sock_ == INVALID_SOCKET; }
    time_t keep_alive_timeout() const { return keep_alive_timeout_sec_; }
};

// The reason phrase httplib writes in a status line.
const char* httplib_reason(int status);
// URL decoding as httplib applies it to the path and to header values ('+' kept).
std::string httplib_decode(const std::string& s);
// httplib's reading of a Range header; false where httplib answers 416 before routing.
bool httplib_parse_ranges(const std::string& value, httplib::Ranges& ranges);

// A Response's content provider, as set_content_provider left it.
inline std::size_t provider_length(const httplib::Response& res) { return res.content_length_; }
inline const httplib::ContentProvider& provider_of(const httplib::Response& res) { return res.content_provider_; }
inline bool chunked_provider(const httplib::Response& res) { return res.is_chunked_content_provider_; }
// What httplib records after writing a provider's bytes (its resource releaser reads it).
inline void set_provider_success(httplib::Response& res, bool ok) { res.content_provider_success_ = ok; }
// Clears the ranges httplib parsed into a Request it hands to handlers as const (the object is
// httplib's own, not const).
inline void drop_ranges(const httplib::Request& req) {
    if (!req.ranges.empty()) const_cast<httplib::Request&>(req).ranges.clear();
}

// The header multimap's key order (httplib's detail::ci: ::tolower, which in the C locale the
// emulator runs in maps A-Z only), without a libc call per character.
inline unsigned char header_lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + 32) : c; }
inline bool header_less(std::string_view a, std::string_view b) {
    const std::size_t n = a.size() < b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char x = header_lower(static_cast<unsigned char>(a[i]));
        const unsigned char y = header_lower(static_cast<unsigned char>(b[i]));
        if (x != y) return x < y;
    }
    return a.size() < b.size();
}
inline bool header_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (header_lower(static_cast<unsigned char>(a[i])) != header_lower(static_cast<unsigned char>(b[i]))) return false;
    return true;
}
// What get_header_value(name) gives (the first field of that name, up to a NUL: httplib returns its
// c_str()), without copying it; "" when there is none. A header map holds a few fields: one pass.
inline std::string_view first_header(const httplib::Headers& headers, std::string_view name) {
    for (const auto& [key, value] : headers)
        if (header_equal(key, name)) return std::string_view(value.c_str());
    return {};
}
// As get_header_value(name), then removes every field of that name from such a Request
// (Accept-Encoding: httplib must not pick a coding), in one pass.
inline std::string take_request_header(const httplib::Request& req, std::string_view name) {
    auto& headers = const_cast<httplib::Request&>(req).headers;
    auto it = headers.begin();
    while (it != headers.end() && !header_equal(it->first, name)) ++it;
    if (it == headers.end()) return {};
    std::string value = it->second.c_str();
    while (it != headers.end() && header_equal(it->first, name)) it = headers.erase(it);  // equal names are adjacent
    return value;
}

}  // namespace vehicledata::emulator
