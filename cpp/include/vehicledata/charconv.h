// Shortest round-trip text of a double and its parse, as std::to_chars / std::from_chars give
// them. libstdc++ has the floating-point overloads only from GCC 11; the wheels are built on
// Debian 11 (GCC 10, glibc 2.31: docs/installing.md), where these fall back to the C library
// with the same results (the "C" locale, shortest representation, fixed or exponent form as
// std::to_chars chooses).
#pragma once

#include <charconv>

namespace vehicledata::charconv {

std::to_chars_result to_chars(char* first, char* last, double value);
std::from_chars_result from_chars(const char* first, const char* last, double& value);

// The fallbacks through the C library, always built (tests compare them with std where it has them).
std::to_chars_result to_chars_c(char* first, char* last, double value);
std::from_chars_result from_chars_c(const char* first, const char* last, double& value);

}  // namespace vehicledata::charconv
