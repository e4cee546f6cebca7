// VIN validation: alphabet, check digit (49 CFR 565.15), model year code.
#include <cctype>
#include <cstdint>

#include "vehicledata/vin.h"

namespace vehicledata::vin {

namespace {

// Transliteration of 49 CFR 565.15 table I, by byte (-1: not in the VIN alphabet).
struct Transliteration {
    signed char value[256]{};
    constexpr Transliteration() {
        for (auto& v : value) v = -1;
        for (char c = '0'; c <= '9'; ++c) value[static_cast<unsigned char>(c)] = static_cast<signed char>(c - '0');
        const char* const letters = "12345678-12345-7-923456789";  // A..Z ('-': I, O, Q)
        for (int i = 0; i < 26; ++i)
            if (letters[i] != '-') value['A' + i] = static_cast<signed char>(letters[i] - '0');
    }
};
constexpr Transliteration kTransliteration;

int transliterate(char c) { return kTransliteration.value[static_cast<unsigned char>(c)]; }

bool in_alphabet(char c) { return transliterate(c) >= 0; }  // the VIN alphabet is what transliterates

// check_digit's terms of a 17-character VIN, by position and byte: the transliterated value times
// the position's weight, kNotInAlphabet for a byte outside the VIN alphabet (any of them makes
// the sum at least kNotInAlphabet: a valid sum is at most 9 * 89 = 801).
constexpr int kWeights[17] = {8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2};
constexpr int kNotInAlphabet = 1 << 11;
struct WeightedTerms {
    std::int16_t term[17][256]{};
    constexpr WeightedTerms() {
        const Transliteration t;
        for (int i = 0; i < 17; ++i)
            for (int b = 0; b < 256; ++b) {
                const int v = t.value[b];
                term[i][b] = static_cast<std::int16_t>(v < 0 ? kNotInAlphabet : v * kWeights[i]);
            }
    }
};
constexpr WeightedTerms kTerms;

// Model year by byte of position 10 (0: not a model year code): "ABCDEFGHJKLMNPRSTVWXY123456789"
// is 2010..2039.
struct YearCodes {
    std::int16_t year[256]{};
    constexpr YearCodes() {
        const char* const codes = "ABCDEFGHJKLMNPRSTVWXY123456789";
        for (int i = 0; codes[i]; ++i) year[static_cast<unsigned char>(codes[i])] = static_cast<std::int16_t>(2010 + i);
    }
};
constexpr YearCodes kYearCodes;

std::string printable(char c) {
    if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) return std::string(1, c);
    static const char* hex = "0123456789ABCDEF";
    const auto u = static_cast<unsigned char>(c);
    return std::string("\\x") + hex[u >> 4] + hex[u & 15];
}

}  // namespace

std::string normalize(std::string_view raw) {
    std::string out;
    normalize_into(raw, out);
    return out;
}

void normalize_into(std::string_view raw, std::string& out) {
    std::size_t b = 0, e = raw.size();
    while (b < e && raw[b] == ' ') ++b;
    while (e > b && raw[e - 1] == ' ') --e;
    out.assign(raw.data() + b, e - b);
    unsigned char high = 0;  // any byte >= 0x80: the locale's toupper
    for (auto& c : out) {
        const auto u = static_cast<unsigned char>(c);
        high |= u;
        c = static_cast<char>(u - ((u - 'a' < 26u) ? 'a' - 'A' : 0));
    }
    if (high & 0x80)
        for (auto& c : out)
            if (static_cast<unsigned char>(c) >= 0x80) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

std::string validation_error(std::string_view vin) {
    if (vin.size() != 17)
        return "expected 17 characters, got " + std::to_string(vin.size());
    // The common case first: every byte in the alphabet (one table read each), the check digit
    // position a digit or X, a model year code.
    bool all_in = true;
    for (char c : vin) all_in &= in_alphabet(c);
    if (all_in && ((vin[8] >= '0' && vin[8] <= '9') || vin[8] == 'X') && year_of_code(vin[9]) != 0) return {};
    for (std::size_t i = 0; i < vin.size(); ++i)
        if (!in_alphabet(vin[i]))
            return "character '" + printable(vin[i]) + "' at position " + std::to_string(i + 1) +
                   " is not in the VIN alphabet (0-9 and A-Z without I, O, Q)";
    if (!(vin[8] >= '0' && vin[8] <= '9') && vin[8] != 'X')
        return std::string("position 9 (check digit) must be 0-9 or X, got '") + vin[8] + "'";
    if (year_of_code(vin[9]) == 0)
        return std::string("position 10 (model year) must be one of A-H, J-N, P, R-T, V-Y, 1-9, got '") + vin[9] + "'";
    return {};
}

char check_digit(std::string_view vin) {
    int sum = 0;
    if (vin.size() >= 17) {
        for (std::size_t i = 0; i < 17; ++i) sum += kTerms.term[i][static_cast<unsigned char>(vin[i])];
        if (sum >= kNotInAlphabet) return '?';
    } else {
        for (std::size_t i = 0; i < vin.size(); ++i) {
            const int v = transliterate(vin[i]);
            if (v < 0) return '?';
            sum += v * kWeights[i];
        }
    }
    const int r = sum % 11;
    return r == 10 ? 'X' : static_cast<char>('0' + r);
}

int year_of_code(char c) { return kYearCodes.year[static_cast<unsigned char>(c)]; }

std::string snake_case(std::string_view name) {
    std::string out;
    bool pending = false;
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            if (pending && !out.empty()) out.push_back('_');
            pending = false;
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        } else {
            pending = true;
        }
    }
    return out;
}

}  // namespace vehicledata::vin
