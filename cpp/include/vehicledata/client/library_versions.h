// The versions of the C/C++ libraries the client is built with and runs against (vd.show_versions()).
#pragma once

#include <string>
#include <vector>

namespace vehicledata::client {

struct LibraryVersion {
    std::string name;     // "libcurl", "simdjson", "SQLite", "OpenSSL"
    std::string version;  // the version the running library reports (simdjson: compiled in, header-only API)
    std::string detail;   // libcurl: its TLS backend, features and protocols; otherwise empty
};

// In the order libcurl, simdjson, SQLite, OpenSSL.
std::vector<LibraryVersion> library_versions();

}  // namespace vehicledata::client
