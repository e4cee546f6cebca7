// The cpp-httplib internals the emulator uses (see httplib_adapter.h).
#include "httplib_adapter.h"

// Exported by Debian's libcpp-httplib 0.11 but not declared in its header (the split build keeps
// the definitions in the library): the reason phrase of the status line and the URL decoding
// httplib applies to the path and to header values. Using them keeps both paths' bytes equal.
namespace httplib::detail {
const char* status_message(int status);
std::string decode_url(const std::string& s, bool convert_plus_to_space);
bool parse_range_header(const std::string& s, Ranges& ranges);  // declared in the header as well
}  // namespace httplib::detail

namespace vehicledata::emulator {

const char* httplib_reason(int status) { return httplib::detail::status_message(status); }

std::string httplib_decode(const std::string& s) { return httplib::detail::decode_url(s, false); }

bool httplib_parse_ranges(const std::string& value, httplib::Ranges& ranges) {
    return httplib::detail::parse_range_header(value, ranges);
}

}  // namespace vehicledata::emulator
