// The VIN answer's 404 messages and trim ranking: see vehicledata/vin_trims.h.
#include "vehicledata/vin_trims.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <string_view>

namespace vehicledata::vin {

namespace {

// ASCII only, as SQLite's lower() that made the catalogue's texts (and no locale call per character).
char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_alnum_ascii(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool contains_word(std::string_view haystack, std::string_view needle) {
    if (needle.empty()) return false;
    for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) {
        const bool left = at == 0 || !is_alnum_ascii(haystack[at - 1]);
        const std::size_t end = at + needle.size();
        const bool right = end >= haystack.size() || !is_alnum_ascii(haystack[end]);
        if (left && right) return true;
    }
    return false;
}

// What the VIN settles, as words a catalogue trim's description, trim and submodel use: groups of
// alternatives of one fact, viewing literals or `words`.  Filled in place by facts_of (the views
// into `words` would not survive a move of a short one); not copyable.
struct Facts {
    struct Group {
        std::string_view alt[2];
        int n = 0;
    };
    static constexpr std::size_t kMaxGroups = 20;  // at most 19: 3 numbers, drive, 2 fuels, 9 bodies, 4 names
    Group groups[kMaxGroups];
    std::size_t n = 0;
    std::size_t names_from = 0;  // groups from here on: vPIC's trim and series
    std::string words;           // the lower-cased values, reserved up front: the views stay valid
    Facts() = default;
    Facts(const Facts&) = delete;
    Facts& operator=(const Facts&) = delete;
    void add(std::string_view a, std::string_view b = std::string_view()) {
        Group& g = groups[n++];
        g.alt[0] = a;
        g.alt[1] = b;
        g.n = b.empty() ? 1 : 2;
    }
    // Appends `v` lower-cased to `words`; its view.
    std::string_view put(std::string_view v) {
        const std::size_t at = words.size();
        for (char c : v) words.push_back(lower_ascii(c));
        return std::string_view(words).substr(at);
    }
};

void facts_of(const Result& r, Facts& f) {
    // The elements read, ascending (Result::get_many).
    static constexpr int kRead[] = {4, kBodyClass, kCylinders, kDisplacementL, kDoors, kDriveType, kFuelPrimary,
                                    kSeries, kTrim, kFuelSecondary, kTrim2, kSeries2};
    enum { eCab, eBody, eCylinders, eDisplacement, eDoors, eDrive, eFuel, eSeries, eTrim, eFuel2, eTrim2, eSeries2,
           eN };
    const std::string_view* v[eN];
    r.get_many(kRead, eN, v);
    std::size_t need = 0;
    for (const std::string_view* x : v) need += (x ? x->size() : 0) + 4;  // its suffix ("cyl", ".0l") or separator
    f.words.reserve(need);
    auto has = [&](int e) { return v[e] && !v[e]->empty(); };
    if (has(eDisplacement)) {
        // "2.5" -> "2.5l", "3" -> "3.0l", "2.50" -> "2.5l"
        const std::size_t at = f.words.size();
        f.put(*v[eDisplacement]);
        if (v[eDisplacement]->find('.') == std::string_view::npos) f.words += ".0";
        while (f.words.size() - at > 3 && f.words.back() == '0' && f.words[f.words.size() - 2] != '.')
            f.words.pop_back();
        f.words += 'l';
        f.add(std::string_view(f.words).substr(at));
    }
    if (has(eCylinders)) {
        const std::size_t at = f.words.size();
        f.put(*v[eCylinders]);
        f.words += "cyl";
        f.add(std::string_view(f.words).substr(at));
    }
    if (has(eDoors)) {
        const std::size_t at = f.words.size();
        f.put(*v[eDoors]);
        f.words += "dr";
        f.add(std::string_view(f.words).substr(at));
    }
    const std::string_view none;
    const std::string_view drive = has(eDrive) ? f.put(*v[eDrive]) : none;
    if (drive.find("4wd") != std::string_view::npos || drive.find("4x4") != std::string_view::npos) f.add("4wd", "4x4");
    else if (drive.find("awd") != std::string_view::npos) f.add("awd");
    else if (drive.find("fwd") != std::string_view::npos) f.add("fwd", "2wd");
    else if (drive.find("rwd") != std::string_view::npos) f.add("rwd", "2wd");
    // Primary and secondary fuel, then body class and cab type, each pair as "<a> <b>".
    auto joined = [&](int a, int b) {
        const std::size_t at = f.words.size();
        if (has(a)) f.put(*v[a]);
        f.words += ' ';
        if (has(b)) f.put(*v[b]);
        return std::string_view(f.words).substr(at);
    };
    const std::string_view fuel = joined(eFuel, eFuel2);
    if (fuel.find("diesel") != std::string_view::npos) f.add("diesel", "turbodiesel");
    const bool electric = fuel.find("electric") != std::string_view::npos;
    if (electric && fuel.find("gasoline") != std::string_view::npos) f.add("hybrid");
    else if (electric) f.add("electric", "ev");
    const std::string_view body = joined(eBody, eCab);
    for (const char* b :
         {"crew cab", "extended cab", "regular cab", "coupe", "convertible", "wagon", "hatchback", "sedan", "van"})
        if (body.find(b) != std::string_view::npos) f.add(b);
    f.names_from = f.n;
    for (int e : {eTrim, eSeries, eTrim2, eSeries2})
        if (has(e)) f.add(f.put(*v[e]));
}

// `text` is "<trim>|<trim> <submodel> <description>" (kTrimTextSql).  A trim/series fact also
// holds when the catalogue trim's name is a word sequence of it ("quattro premium plus" names the
// catalogue's "premium plus", "base / lx" its "lx").
int score(const Facts& f, const std::string& text) {
    const std::size_t bar = text.find('|');
    const std::string_view name = bar == std::string::npos ? std::string_view() : std::string_view(text).substr(0, bar);
    int s = 0;
    for (std::size_t i = 0; i < f.n; ++i)
        for (int j = 0; j < f.groups[i].n; ++j) {
            const std::string_view w = f.groups[i].alt[j];
            if (contains_word(text, w) || (i >= f.names_from && contains_word(w, name))) { ++s; break; }
        }
    return s;
}

}  // namespace

bool trims_key(int year, int model_id, int make_id, std::uint64_t& key) {
    if (year < 0 || year >= 1 << 16 || model_id < 0 || model_id >= 1 << 24 || make_id < 0 || make_id >= 1 << 24) return false;
    key = (static_cast<std::uint64_t>(year) << 48) | (static_cast<std::uint64_t>(model_id) << 24) |
          static_cast<std::uint64_t>(make_id);
    return true;
}

int current_year_utc() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    return tm.tm_year + 1900;
}

std::string invalid_message(std::string_view raw) {
    const std::string problem = validation_error(normalize(raw));
    if (problem.empty()) return problem;
    if (raw.size() <= kEchoBytes) return "Invalid VIN '" + std::string(raw) + "': " + problem;
    std::size_t keep = kEchoBytes;
    while (keep > 0 && (static_cast<unsigned char>(raw[keep]) & 0xC0) == 0x80) --keep;  // not inside a character
    return "Invalid VIN '" + std::string(raw.substr(0, keep)) + "...' (" + std::to_string(raw.size()) +
           " bytes): " + problem;
}

bool not_found_message_into(std::string_view vin, const Result& r, std::string& out) {
    out.clear();
    if (r.status == Result::Status::ok) {  // the common case: a make and a model (one pass over the values)
        static constexpr int kMakeModel[] = {kMake, kModel};
        static_assert(kMake < kModel);
        const std::string_view* mm[2];
        r.get_many(kMakeModel, 2, mm);
        if (mm[0] && mm[1]) return false;
    }
    char digits[16];
    const char* const digits_end = std::to_chars(digits, digits + sizeof digits, r.year).ptr;
    const std::string_view year(digits, static_cast<std::size_t>(digits_end - digits));
    out += "VIN ";
    out += vin;
    if (r.status == Result::Status::unknown_wmi) {
        out += ": unknown manufacturer code (WMI) '";
        out += r.wmi;
        out += '\'';
    } else if (r.status == Result::Status::no_schema) {
        out += ": no VIN schema of WMI '";
        out += r.wmi;
        out += "' covers model year ";
        out += year;
    } else {  // decoded without a make or a model
        out += ": no model decodes for model year ";
        out += year;
        out += " (vPIC error code ";
        if (const std::string_view* code = r.get(kErrorCode)) out += *code;
        out += ')';
    }
    return true;
}

std::string not_found_message(std::string_view vin, const Result& r) {
    std::string out;
    not_found_message_into(vin, r, out);
    return out;
}

std::vector<std::pair<int, std::int64_t>> rank_trims(const Result& r, const TrimTexts& trims, bool all_trims) {
    std::vector<std::pair<int, std::int64_t>> ranked;
    if (trims.empty()) return ranked;
    Facts facts;
    facts_of(r, facts);
    ranked.reserve(trims.size());
    for (const auto& [id, text] : trims) ranked.emplace_back(score(facts, text), id);
    // Equal scores go to the lowest trim id, whatever the order of `trims`: the order is a function
    // of the scores and ids alone (two entries that compare equal are one trim, scored alike).
    if (!all_trims) {
        // The best score's trims by id: what the sort below puts first.
        int top = ranked.front().first;
        for (const auto& x : ranked) top = std::max(top, x.first);
        ranked.erase(std::remove_if(ranked.begin(), ranked.end(), [&](const auto& x) { return x.first < top; }),
                     ranked.end());
        std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        return ranked;
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    return ranked;
}

}  // namespace vehicledata::vin
