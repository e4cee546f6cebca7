#include "vehicledata/charconv.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <locale.h>
#include <string>
#include <system_error>

namespace vehicledata::charconv {

namespace {

locale_t c_locale() {
    static locale_t loc = newlocale(LC_ALL_MASK, "C", nullptr);
    return loc;
}

std::to_chars_result put(char* first, char* last, const std::string& s) {
    if (static_cast<std::size_t>(last - first) < s.size()) return {last, std::errc::value_too_large};
    std::memcpy(first, s.data(), s.size());
    return {first + s.size(), std::errc()};
}

}  // namespace

std::to_chars_result to_chars_c(char* first, char* last, double value) {
    if (std::isnan(value)) return put(first, last, std::signbit(value) ? "-nan" : "nan");
    if (std::isinf(value)) return put(first, last, value < 0 ? "-inf" : "inf");
    if (value == 0) return put(first, last, std::signbit(value) ? "-0" : "0");
    // The fewest significant digits that read back as the same double, in exponent form.
    char sci[40];
    locale_t previous = uselocale(c_locale());  // printf's decimal point is the locale's
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(sci, sizeof sci, "%.*e", digits - 1, value);
        if (strtod_l(sci, nullptr, c_locale()) == value) break;
    }
    uselocale(previous);
    // sci: [-]d[.ddd]e[+-]XX -> sign, digit string, decimal exponent.
    std::string text(sci);
    bool negative = text[0] == '-';
    if (negative) text.erase(0, 1);
    std::size_t e = text.find('e');
    int exponent = std::atoi(text.c_str() + e + 1);
    std::string mantissa = text.substr(0, e);
    std::string ds;
    for (char c : mantissa)
        if (c != '.') ds += c;
    // Exponent form as printf's %e writes it (at least two exponent digits).
    std::string expo = ds.substr(0, 1);
    if (ds.size() > 1) expo += "." + ds.substr(1);
    char ebuf[8];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
    expo += ebuf;
    // Fixed form with the same digits.
    std::string fixed;
    int n = static_cast<int>(ds.size());
    if (exponent >= n - 1) {
        // An integer: fixed form writes its exact decimal value, as printf's %.0f does.
        char ibuf[320];
        std::snprintf(ibuf, sizeof ibuf, "%.0f", negative ? -value : value);
        fixed = ibuf;
    } else if (exponent >= 0) {
        fixed = ds.substr(0, static_cast<std::size_t>(exponent + 1)) + "." + ds.substr(static_cast<std::size_t>(exponent + 1));
    } else {
        fixed = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + ds;
    }
    const std::string& best = fixed.size() <= expo.size() ? fixed : expo;
    return put(first, last, (negative ? "-" : "") + best);
}

std::from_chars_result from_chars_c(const char* first, const char* last, double& value) {
    // std::from_chars (general format) takes no leading whitespace, no '+', no hexadecimal.
    if (first == last || *first == '+' || *first == ' ' || *first == '\t' || *first == '\n') {
        return {first, std::errc::invalid_argument};
    }
    std::string text(first, last);
    std::size_t body = text[0] == '-' ? 1 : 0;
    if (body < text.size() && (text[body] == ' ' || text[body] == '+')) return {first, std::errc::invalid_argument};
    if (text.size() > body + 1 && text[body] == '0' && (text[body + 1] == 'x' || text[body + 1] == 'X')) {
        value = 0;  // "0x..." reads as 0 followed by "x..."
        return {first + body + 1, std::errc()};
    }
    char* end = nullptr;
    errno = 0;
    double v = strtod_l(text.c_str(), &end, c_locale());
    if (end == text.c_str()) return {first, std::errc::invalid_argument};
    const char* ptr = first + (end - text.c_str());
    // glibc also says ERANGE for subnormal results, which std::from_chars returns as values.
    if (errno == ERANGE && (v == 0 || std::isinf(v))) return {ptr, std::errc::result_out_of_range};
    value = v;
    return {ptr, std::errc()};
}

#if defined(__cpp_lib_to_chars)
std::to_chars_result to_chars(char* first, char* last, double value) { return std::to_chars(first, last, value); }
std::from_chars_result from_chars(const char* first, const char* last, double& value) {
    return std::from_chars(first, last, value);
}
#else
std::to_chars_result to_chars(char* first, char* last, double value) { return to_chars_c(first, last, value); }
std::from_chars_result from_chars(const char* first, const char* last, double& value) {
    return from_chars_c(first, last, value);
}
#endif

}  // namespace vehicledata::charconv
