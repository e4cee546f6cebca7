// A simple VIN decoder over the vPIC tables: model year from position 10, make
// from the WMI, other elements from the VIN schema patterns; trims from the
// emulator's own data.  See docs/emulator.md for what it does not do.
#include <cctype>
#include <map>

#include "vehicledata/emulator/api.h"

namespace vehicledata::emulator {

namespace {

const format::QueryParam* param(const Call& call, std::string_view name) {
    for (const auto& p : call.params)
        if (p.name == name) return p.value.empty() ? nullptr : &p;
    return nullptr;
}

bool yes_no(const Call& call, const char* name) {
    const auto* p = param(call, name);
    if (!p) return false;
    if (p->value == "yes") return true;
    if (p->value == "no") return false;
    throw HttpError(400, "BadRequestException", std::string("Invalid ") + name + " '" + p->value + "': expected yes or no");
}

bool vin_char(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z' && c != 'I' && c != 'O' && c != 'Q'); }

// Model year from position 10; position 7 alphabetic means the 2010-2039 cycle (passenger vehicles).
int model_year(const std::string& vin) {
    static const std::string codes = "ABCDEFGHJKLMNPRSTVWXY123456789";  // 1980..2009
    auto pos = codes.find(vin[9]);
    if (pos == std::string::npos) return 0;
    int year = 1980 + static_cast<int>(pos);
    if (std::isalpha(static_cast<unsigned char>(vin[6]))) year += 30;
    return year;
}

// vPIC pattern keys: literal characters, '*' for any character, [..] classes with ranges.
// Matches a prefix of `d`; `score` counts the constrained positions.
bool key_matches(std::string_view key, std::string_view d, int& score) {
    std::size_t i = 0, j = 0;
    score = 0;
    while (i < key.size()) {
        if (j >= d.size()) return false;
        const char c = key[i];
        if (c == '*') {
            ++i;
        } else if (c == '[') {
            auto close = key.find(']', i);
            if (close == std::string_view::npos) return false;
            std::string_view cls = key.substr(i + 1, close - i - 1);
            bool hit = false;
            for (std::size_t k = 0; k < cls.size() && !hit; ++k) {
                if (k + 2 < cls.size() && cls[k + 1] == '-') {
                    hit = d[j] >= cls[k] && d[j] <= cls[k + 2];
                    k += 2;
                } else {
                    hit = d[j] == cls[k];
                }
            }
            if (!hit) return false;
            ++score;
            i = close + 1;
        } else {
            if (std::toupper(static_cast<unsigned char>(c)) != d[j]) return false;
            ++score;
            ++i;
        }
        ++j;
    }
    return true;
}

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

bool safe_identifier(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

std::string column_text(sqlite3_stmt* s, int c) {
    const unsigned char* t = sqlite3_column_text(s, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(s, c))) : std::string();
}

constexpr int kMakeElement = 26, kModelElement = 28, kYearElement = 29, kTrimElement = 38;

}  // namespace

void Api::vin(const Call& call, httplib::Response& res) {
    std::string vin = call.route->arg;
    for (auto& c : vin) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    bool valid = vin.size() == 17;
    for (char c : vin) valid = valid && vin_char(c);
    if (!valid)
        throw HttpError(400, "BadRequestException",
                        "Invalid VIN '" + call.route->arg + "': expected 17 characters of 0-9 and A-Z without I, O, Q");
    const bool verbose = yes_no(call, "verbose");
    const bool all_trims = yes_no(call, "all_trims");
    if (!store_.has_vpic())
        throw HttpError(501, "NotImplementedException", "VIN decoding needs the vPIC tables, which this database lacks");
    const int year = model_year(vin);
    if (year == 0) throw HttpError(400, "BadRequestException", "Invalid VIN '" + vin + "': position 10 is not a model year code");
    const bool demo = !(call.identity.valid && call.identity.subscribed);
    if (demo && (year < schema::kDemoFirstYear || year > schema::kDemoLastYear))
        throw HttpError(404, "NotFoundException", "Model year " + std::to_string(year) +
                                                      " is outside the demo data-set (2015-2020): log in with a subscription");

    std::int64_t wmi_id = 0, wmi_make = 0;
    {
        Statement st = store_.statement("SELECT Id, MakeId FROM vpic.Wmi WHERE Wmi = ? LIMIT 1");
        st.bind({query::Scalar(vin.substr(0, 3))});
        if (!st.step()) throw HttpError(404, "NotFoundException", "Unknown manufacturer code (WMI) '" + vin.substr(0, 3) + "'");
        wmi_id = sqlite3_column_int64(st.get(), 0);
        wmi_make = sqlite3_column_int64(st.get(), 1);
    }

    // Best pattern per element: the most constrained key that matches.
    struct Hit { int score = -1; std::string attribute; };
    std::map<int, Hit> hits;
    const std::string descriptor = vin.substr(3, 5) + "|" + vin.substr(9, 8);
    {
        Statement st = store_.statement(
            "SELECT p.Keys, p.ElementId, p.AttributeId FROM vpic.Pattern p WHERE p.VinSchemaId IN "
            "(SELECT VinSchemaId FROM vpic.Wmi_VinSchema WHERE WmiId = ?1 AND ?2 BETWEEN YearFrom AND ifnull(YearTo, 9999)) "
            "ORDER BY p.Id");
        st.bind({query::Scalar(wmi_id), query::Scalar(static_cast<std::int64_t>(year))});
        while (st.step()) {
            int score = 0;
            if (!key_matches(column_text(st.get(), 0), descriptor, score)) continue;
            Hit& h = hits[sqlite3_column_int(st.get(), 1)];
            if (score > h.score) {
                h.score = score;
                h.attribute = column_text(st.get(), 2);
            }
        }
    }
    if (!hits.count(kMakeElement) && wmi_make > 0) hits[kMakeElement] = Hit{0, std::to_string(wmi_make)};
    hits[kYearElement] = Hit{0, std::to_string(year)};

    // Element names and lookups; values resolved through each element's lookup table.
    struct Spec { std::string key; std::optional<std::string> value; };
    std::vector<Spec> specs;
    std::map<int, std::string> values;
    {
        Statement st = store_.statement(
            "SELECT Id, Name, ifnull(LookupTable, '') FROM vpic.Element WHERE ifnull(IsPrivate, 0) = 0 ORDER BY Id");
        while (st.step()) {
            const int id = sqlite3_column_int(st.get(), 0);
            Spec spec{snake_case(column_text(st.get(), 1)), std::nullopt};
            auto h = hits.find(id);
            if (h != hits.end()) {
                std::string value = h->second.attribute;
                const std::string lookup = column_text(st.get(), 2);
                if (safe_identifier(lookup)) {
                    try {
                        Statement l = store_.statement("SELECT Name FROM vpic." + lookup + " WHERE Id = ?");
                        l.bind({query::Scalar(value)});
                        if (l.step()) value = column_text(l.get(), 0);
                    } catch (const StoreError&) {
                        // lookup table missing from the lite vPIC tables: keep the raw value
                    }
                }
                values[id] = value;
                spec.value = value;
            }
            specs.push_back(std::move(spec));
        }
    }
    const std::string make = values.count(kMakeElement) ? values[kMakeElement] : "";
    const std::string model = values.count(kModelElement) ? values[kModelElement] : "";
    if (make.empty() || model.empty())
        throw HttpError(404, "NotFoundException", "VIN " + vin + " could not be decoded to a make and model");
    std::optional<std::string> trim;
    if (values.count(kTrimElement) && !values[kTrimElement].empty()) trim = values[kTrimElement];

    // Trims of the emulator's data: same year and make, model by prefix; the decoded trim unless all_trims=yes.
    const Plan& plan = plan_of(*schema::find_record("trim_legacy"), verbose);
    std::vector<std::int64_t> trim_rows;
    for (int attempt = 0; attempt < 2 && trim_rows.empty(); ++attempt) {
        const bool by_trim = attempt == 0 && trim && !all_trims;
        if (attempt == 0 && !by_trim) attempt = 1;
        std::string sql = "SELECT rowid FROM trims WHERE year = ? AND make = ? COLLATE NOCASE AND model LIKE ?";
        std::vector<query::Scalar> params = {query::Scalar(static_cast<std::int64_t>(year)), query::Scalar(make),
                                             query::Scalar(model + "%")};
        if (by_trim) {
            sql += " AND trim LIKE ?";
            params.emplace_back(*trim + "%");
        }
        Statement st = store_.statement(sql + " ORDER BY id LIMIT 200");
        st.bind(params);
        while (st.step()) trim_rows.push_back(sqlite3_column_int64(st.get(), 0));
    }

    const schema::Record* result = schema::find_record("vin_result");
    std::string out = "{";
    bool first = true;
    for (const auto* f : result->record_fields()) {
        if (!first) out.push_back(',');
        first = false;
        format::append_json_string(out, f->name);
        out.push_back(':');
        if (f->name == "year") {
            format::append_int(out, year);
        } else if (f->name == "make") {
            format::append_json_string(out, make);
        } else if (f->name == "model") {
            format::append_json_string(out, model);
        } else if (f->name == "trim") {
            if (trim) format::append_json_string(out, *trim);
            else out.append("null");
        } else if (f->name == "specs") {
            out.push_back('{');
            bool sf = true;
            for (const auto& s : specs) {
                if (s.key.empty()) continue;
                if (!sf) out.push_back(',');
                sf = false;
                format::append_json_string(out, s.key);
                out.push_back(':');
                if (s.value) format::append_json_string(out, *s.value);
                else out.append("null");
            }
            out.push_back('}');
        } else if (f->name == "trims") {
            out.push_back('[');
            Statement st = store_.statement("SELECT " + plan.select_list + " FROM trims WHERE rowid = ?");
            bool tf = true;
            for (std::int64_t rowid : trim_rows) {
                sqlite3_reset(st.get());
                sqlite3_bind_int64(st.get(), 1, rowid);
                if (!st.step()) continue;
                if (!tf) out.push_back(',');
                tf = false;
                write_json_row(out, st.get(), plan,
                               [&](std::string& o, const PlanItem& it) { write_nested(o, it, st.get(), plan, demo); });
                if (verbose) append_verbose_arrays(out, st.get(), plan, demo);
            }
            out.push_back(']');
        } else {
            out.append("null");
        }
    }
    out.push_back('}');
    set_json(res, std::move(out));
}

}  // namespace vehicledata::emulator
