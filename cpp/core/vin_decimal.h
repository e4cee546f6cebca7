// SQL Server's decimal arithmetic for vPIC's Conversion formulas ("#x# / 16.387064"): the value
// and the constant typed as T-SQL literals, * and / with T-SQL's result precision and scale,
// the result as T-SQL converts it to varchar.  Private to cpp/core/vin_decode.cpp.
#pragma once

#include <string>
#include <string_view>

namespace vehicledata::vin {

struct Decimal {
    __int128 mantissa = 0;
    int precision = 1, scale = 0;
    bool is_int = false;  // an integer literal (T-SQL int)

    // A T-SQL numeric literal; false when `s` is not one.
    static bool parse(std::string_view s, Decimal& out);
    std::string str() const;

};

struct Formula {
    char op = 0;
    Decimal constant;
    bool valid = false;
    // "#x# <op> <literal>" with op * or /; anything else is an invalid formula.
    static Formula parse(std::string_view f);
    // The formula applied to `value`; "0" when the value is not numeric or the formula fails,
    // as the T-SQL CATCH does.
    std::string apply(std::string_view value) const;
};

}  // namespace vehicledata::vin
