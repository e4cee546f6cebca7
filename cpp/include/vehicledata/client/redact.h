// Secrets this process holds (API secrets, JWTs it obtained), and their
// removal from any text that leaves the client: exception messages and URLs
// (a hostile server may echo the Authorization header into its error body).
// Thread-safe.  Keeps the most recent 64 JWTs.
#pragma once

#include <string>

namespace vehicledata::client {

void remember_secret(const std::string& secret);  // ignored when shorter than 8 characters
std::string redact(std::string text);              // each remembered secret -> "***"

}  // namespace vehicledata::client
