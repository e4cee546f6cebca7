// The X-Emulator-Synthetic header: which fields of a response's records have no
// public source (provenance origin 'synthetic'), read once at start-up.
#include <set>
#include <utility>

#include "synthetic.h"

namespace vehicledata::emulator {

namespace {

using Synthetic = std::set<std::pair<std::string, std::string>>;  // (table_name, column_name)

// The synthetic fields of `record` (nested records' as "key.field"), in record order.
void collect(const schema::Record& record, const Synthetic& syn, const std::string& prefix, std::string& out,
             int depth) {
    for (const auto* f : record.record_fields(true)) {
        if (f->type == schema::Type::Nested) {
            const schema::Record* n = schema::find_record(f->nested);
            if (n && depth < 2) collect(*n, syn, prefix + f->name + ".", out, depth + 1);
            continue;
        }
        if (record.table.empty() || !syn.count({record.table, std::string(f->name)})) continue;
        if (!out.empty()) out.push_back(',');
        out.append(prefix).append(f->name);
    }
}

}  // namespace

std::map<std::string, std::string> synthetic_fields(Store& store) {
    std::map<std::string, std::string> synthetic;
    Synthetic syn;
    try {
        Statement st = store.statement(
            "SELECT table_name, column_name FROM provenance WHERE origin = 'synthetic'");
        while (st.step()) {
            auto text = [&](int c) {
                const unsigned char* t = sqlite3_column_text(st.get(), c);
                return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
            };
            syn.emplace(text(0), text(1));
        }
    } catch (const StoreError&) {
        return synthetic;  // a database without a provenance table: no synthetic fields to declare
    }
    for (const auto& r : schema::records()) {
        std::string value;
        collect(r, syn, "", value, 0);
        if (!value.empty()) synthetic[r.name] = std::move(value);
    }
    return synthetic;
}

void set_synthetic_header(const std::map<std::string, std::string>& synthetic, const Call& call,
                          httplib::Response& res) {
    if (!call.route || !call.route->endpoint) return;
    const schema::Kind k = call.route->kind;
    if (k != schema::Kind::Search && k != schema::Kind::Detail && k != schema::Kind::Vin) return;
    auto it = synthetic.find(call.route->endpoint->record);
    if (it != synthetic.end()) res.set_header("X-Emulator-Synthetic", it->second);
}

}  // namespace vehicledata::emulator
