// The VIN answer's 404 messages and trim ranking: see vehicledata/vin_trims.h.
#include "vehicledata/vin_trims.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string_view>

namespace vehicledata::vin {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool contains_word(std::string_view haystack, std::string_view needle) {
    if (needle.empty()) return false;
    for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) {
        const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(haystack[at - 1]));
        const std::size_t end = at + needle.size();
        const bool right = end >= haystack.size() || !std::isalnum(static_cast<unsigned char>(haystack[end]));
        if (left && right) return true;
    }
    return false;
}

// What the VIN settles, as words a catalogue trim's description, trim and submodel use.
struct Facts {
    std::vector<std::vector<std::string>> groups;  // each group: alternatives of one fact
    std::size_t names_from = 0;                    // groups from here on: vPIC's trim and series
};

Facts facts_of(const Result& r) {
    Facts f;
    auto val = [&](int e) { const std::string_view* v = r.get(e); return v ? lower(*v) : std::string(); };
    if (std::string d = val(kDisplacementL); !d.empty()) {
        // "2.5" -> "2.5l"
        if (d.find('.') == std::string::npos) d += ".0";
        while (d.size() > 3 && d.back() == '0' && d[d.size() - 2] != '.') d.pop_back();
        f.groups.push_back({d + "l"});
    }
    if (std::string c = val(kCylinders); !c.empty()) f.groups.push_back({c + "cyl"});
    if (std::string d = val(kDoors); !d.empty()) f.groups.push_back({d + "dr"});
    const std::string drive = val(kDriveType);
    if (drive.find("4wd") != std::string::npos || drive.find("4x4") != std::string::npos) f.groups.push_back({"4wd", "4x4"});
    else if (drive.find("awd") != std::string::npos) f.groups.push_back({"awd"});
    else if (drive.find("fwd") != std::string::npos) f.groups.push_back({"fwd", "2wd"});
    else if (drive.find("rwd") != std::string::npos) f.groups.push_back({"rwd", "2wd"});
    const std::string fuel = val(kFuelPrimary) + " " + val(kFuelSecondary);
    if (fuel.find("diesel") != std::string::npos) f.groups.push_back({"diesel", "turbodiesel"});
    if (fuel.find("electric") != std::string::npos && fuel.find("gasoline") != std::string::npos) f.groups.push_back({"hybrid"});
    else if (fuel.find("electric") != std::string::npos) f.groups.push_back({"electric", "ev"});
    const std::string body = val(kBodyClass) + " " + val(4);  // body class, cab type
    for (const char* b : {"crew cab", "extended cab", "regular cab", "coupe", "convertible", "wagon", "hatchback", "sedan", "van"})
        if (body.find(b) != std::string::npos) f.groups.push_back({b});
    f.names_from = f.groups.size();
    for (int e : {kTrim, kSeries, kTrim2, kSeries2})
        if (std::string t = val(e); !t.empty()) f.groups.push_back({t});
    return f;
}

// `text` is "<trim>|<trim> <submodel> <description>" (kTrimTextSql).  A trim/series fact also
// holds when the catalogue trim's name is a word sequence of it ("quattro premium plus" names the
// catalogue's "premium plus", "base / lx" its "lx").
int score(const Facts& f, const std::string& text) {
    const std::size_t bar = text.find('|');
    const std::string_view name = bar == std::string::npos ? std::string_view() : std::string_view(text).substr(0, bar);
    int s = 0;
    for (std::size_t i = 0; i < f.groups.size(); ++i)
        for (const auto& w : f.groups[i])
            if (contains_word(text, w) || (i >= f.names_from && contains_word(w, name))) { ++s; break; }
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
    return problem.empty() ? problem : "Invalid VIN '" + std::string(raw) + "': " + problem;
}

std::string not_found_message(std::string_view vin, const Result& r) {
    if (r.status == Result::Status::ok && r.get(kMake) && r.get(kModel)) return std::string();  // the common case: no copy
    const std::string v(vin);
    if (r.status == Result::Status::unknown_wmi) return "VIN " + v + ": unknown manufacturer code (WMI) '" + r.wmi + "'";
    if (r.status == Result::Status::no_schema)
        return "VIN " + v + ": no VIN schema of WMI '" + r.wmi + "' covers model year " + std::to_string(r.year);
    if (!r.get(kMake) || !r.get(kModel)) {
        const std::string_view* code = r.get(kErrorCode);
        return "VIN " + v + ": no model decodes for model year " + std::to_string(r.year) + " (vPIC error code " +
               (code ? std::string(*code) : std::string()) + ")";
    }
    return std::string();
}

std::vector<std::pair<int, std::int64_t>> rank_trims(const Result& r, const TrimTexts& trims, bool all_trims) {
    std::vector<std::pair<int, std::int64_t>> ranked;
    if (trims.empty()) return ranked;
    const Facts facts = facts_of(r);
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
