// T-SQL decimal literals and * / for vPIC's Conversion formulas.
#include <algorithm>

#include "vin_decimal.h"

#include "vehicledata/format.h"

namespace vehicledata::vin {

namespace {

using format::trim_blanks;

__int128 pow10(int n) {
    __int128 r = 1;
    while (n-- > 0) r *= 10;
    return r;
}

}  // namespace

bool Decimal::parse(std::string_view s, Decimal& out) {
    s = trim_blanks(s);
    if (s.empty() || s.size() > 30) return false;
    out = Decimal{};
    const auto dot = s.find('.');
    std::string_view ip = s.substr(0, dot), fp = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
    if (ip.empty() && fp.empty()) return false;
    for (char c : ip) if (c < '0' || c > '9') return false;
    for (char c : fp) if (c < '0' || c > '9') return false;
    for (char c : ip) out.mantissa = out.mantissa * 10 + (c - '0');
    for (char c : fp) out.mantissa = out.mantissa * 10 + (c - '0');
    out.scale = static_cast<int>(fp.size());
    std::size_t lead = 0;
    while (lead < ip.size() && ip[lead] == '0') ++lead;
    out.precision = std::max<int>(1, static_cast<int>(ip.size() - lead) + out.scale);
    out.is_int = dot == std::string_view::npos && out.mantissa <= 2147483647;
    if (out.is_int) out.precision = 10;
    return true;
}

std::string Decimal::str() const {
    __int128 m = mantissa < 0 ? -mantissa : mantissa;
    std::string digits;
    do {
        digits.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
        m /= 10;
    } while (m > 0);
    while (static_cast<int>(digits.size()) <= scale) digits.push_back('0');
    std::reverse(digits.begin(), digits.end());
    if (scale > 0) digits.insert(digits.size() - static_cast<std::size_t>(scale), 1, '.');
    return (mantissa < 0 ? "-" : "") + digits;
}

Formula Formula::parse(std::string_view f) {
    Formula out;
    f = trim_blanks(f);
    const std::string_view x = "#x#";
    if (f.substr(0, x.size()) != x) return out;
    f = trim_blanks(f.substr(x.size()));
    if (f.empty() || (f[0] != '*' && f[0] != '/')) return out;
    out.op = f[0];
    out.valid = Decimal::parse(f.substr(1), out.constant);
    return out;
}

std::string Formula::apply(std::string_view value) const {
    Decimal a;
    if (!valid || !Decimal::parse(value, a)) return "0";
    const Decimal& b = constant;
    Decimal r;
    if (a.is_int && b.is_int) {
        if (op == '*') r.mantissa = a.mantissa * b.mantissa;
        else if (b.mantissa == 0) return "0";
        else r.mantissa = a.mantissa / b.mantissa;
        r.is_int = true;
        return r.str();
    }
    if (op == '*') {
        r.mantissa = a.mantissa * b.mantissa;
        r.scale = a.scale + b.scale;
        r.precision = a.precision + b.precision + 1;
    } else {
        if (b.mantissa == 0) return "0";
        r.scale = std::max(6, a.scale + b.precision + 1);
        r.precision = a.precision - a.scale + b.scale + r.scale;
        const int shift = r.scale + b.scale - a.scale;
        if (shift < 0 || shift > 30) return "0";
        r.mantissa = a.mantissa * pow10(shift) / b.mantissa;  // T-SQL truncates
    }
    if (r.precision > 38) return "0";
    return r.str();
}

}  // namespace vehicledata::vin
