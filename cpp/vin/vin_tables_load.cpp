// Reads the vPIC tables once into vin::Tables (see vehicledata/vin_load.h).
#include "vehicledata/vin_load.h"

#include <sqlite3.h>

#include <sys/stat.h>

#include <cctype>
#include <set>
#include <vector>

namespace vehicledata::vin {

namespace {

bool safe_identifier(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

// The tables load_tables reads without looking first (and the make and model names).
constexpr const char* kVpicTables[] = {"Wmi",     "Wmi_Make", "Wmi_VinSchema", "VinSchema", "Pattern",
                                       "Element", "Make_Model", "Make",        "Model"};

// The rows of a one-text-column query over `db` ("" and the SQLite message on failure).
std::string texts(sqlite3* db, const char* sql, std::vector<std::string>& out) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
        std::string msg = sqlite3_errmsg(db);
        sqlite3_finalize(st);
        return msg;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) out.push_back(column_text(st, 0));
    std::string msg = rc == SQLITE_DONE ? std::string() : std::string(sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return msg;
}

}  // namespace

std::string vpic_file(const std::string& dataset, const std::string& rel) {
    if (rel.empty() || rel[0] == '/') return rel;
    const auto slash = dataset.rfind('/');
    return (slash == std::string::npos ? std::string(".") : dataset.substr(0, slash)) + "/" + rel;
}

std::string attach_vpic(sqlite3* db, const std::string& dataset, const std::string& file) {
    const std::string rebuild = ": rebuild the dataset (`vehicledata dataset build`)";
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return "the vPIC tables file " + file + " is missing: it belongs beside " + dataset +
               " (copy it with the database, or rebuild the dataset with `vehicledata dataset build`)";
    const auto damaged = [&](const std::string& what) { return file + " is damaged or incomplete (" + what + ")" + rebuild; };
    // What the build recorded (absent in datasets built before it did).
    std::string bytes, recorded;
    {
        std::vector<std::string> v;
        if (texts(db, "SELECT value FROM meta WHERE key = 'vpic_bytes'", v).empty() && !v.empty()) bytes = v[0];
        v.clear();
        if (texts(db, "SELECT value FROM meta WHERE key = 'vpic_tables'", v).empty() && !v.empty()) recorded = v[0];
    }
    if (!bytes.empty() && bytes != std::to_string(static_cast<long long>(st.st_size)))
        return damaged(std::to_string(static_cast<long long>(st.st_size)) + " bytes, the build wrote " + bytes);
    sqlite3_stmt* a = nullptr;
    int rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS vpic", -1, &a, nullptr);
    if (rc == SQLITE_OK) {
        const std::string uri = file_uri(file);
        sqlite3_bind_text(a, 1, uri.c_str(), -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(a);
    }
    sqlite3_finalize(a);
    if (rc != SQLITE_DONE && rc != SQLITE_OK) return damaged(sqlite3_errmsg(db));
    std::vector<std::string> names;
    std::string error = texts(db, "SELECT name FROM vpic.sqlite_master WHERE type IN ('table', 'view')", names);
    std::string missing;
    if (error.empty()) {
        const std::set<std::string> present(names.begin(), names.end());
        std::set<std::string> wanted(std::begin(kVpicTables), std::end(kVpicTables));
        for (std::size_t start = 0; start < recorded.size();) {
            std::size_t comma = recorded.find(',', start);
            if (comma == std::string::npos) comma = recorded.size();
            if (comma > start) wanted.insert(recorded.substr(start, comma - start));
            start = comma + 1;
        }
        for (const auto& t : wanted)
            if (!present.count(t)) missing += (missing.empty() ? "" : ", ") + t;
        if (missing.empty()) return {};
    }
    sqlite3_exec(db, "DETACH DATABASE vpic", nullptr, nullptr, nullptr);
    return damaged(error.empty() ? "no table " + missing : error);
}

std::string column_text(sqlite3_stmt* s, int c) {
    const unsigned char* t = sqlite3_column_text(s, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(s, c)))
             : std::string();
}

std::string file_uri(const std::string& path, bool immutable) {
    std::string uri = "file:";
    for (char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            static const char* hex = "0123456789ABCDEF";
            uri.push_back('%');
            uri.push_back(hex[static_cast<unsigned char>(c) >> 4]);
            uri.push_back(hex[c & 15]);
        } else {
            uri.push_back(c);
        }
    }
    return immutable ? uri + "?immutable=1" : uri;
}

RowReader connection_reader(sqlite3* db, const std::atomic<bool>* cancel) {
    return [db, cancel](const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
            throw LoadError("VIN tables: " + std::string(sqlite3_errmsg(db)) + " in: " + sql);
        struct Finalize { sqlite3_stmt* s; ~Finalize() { sqlite3_finalize(s); } } finalize{st};
        for (std::size_t n = 0;; ++n) {
            if ((n & 4095) == 0 && cancel && cancel->load(std::memory_order_relaxed))
                throw LoadError("VIN tables: load cancelled");
            const int rc = sqlite3_step(st);
            if (rc == SQLITE_DONE) break;
            if (rc != SQLITE_ROW) throw LoadError("VIN tables: " + std::string(sqlite3_errmsg(db)) + " in: " + sql);
            row(st);
        }
    };
}

Tables load_tables(const RowReader& each_row) {
    Tables t;
    const auto text = column_text;
    std::set<std::string> tables;
    each_row("SELECT name FROM vpic.sqlite_master WHERE type IN ('table', 'view')",
             [&](sqlite3_stmt* s) { tables.insert(text(s, 0)); });
    // WMIs publicly available (spVinDecode_Core: PublicAvailabilityDate <= getdate()).
    each_row("SELECT Id, Wmi, ifnull(ManufacturerId, 0), ifnull(VehicleTypeId, 0), ifnull(TruckTypeId, 0) FROM vpic.Wmi "
             "WHERE PublicAvailabilityDate <= strftime('%Y-%m-%d %H:%M:%S', 'now')",
             [&](sqlite3_stmt* s) {
                 t.wmis.push_back({sqlite3_column_int(s, 0), text(s, 1), sqlite3_column_int(s, 2), sqlite3_column_int(s, 3),
                                   sqlite3_column_int(s, 4)});
             });
    each_row("SELECT WmiId, MakeId FROM vpic.Wmi_Make",
             [&](sqlite3_stmt* s) { t.wmi_makes.emplace_back(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1)); });
    each_row("SELECT WmiId, VinSchemaId, YearFrom, ifnull(YearTo, 0) FROM vpic.Wmi_VinSchema", [&](sqlite3_stmt* s) {
        t.wmi_schemas.push_back(
            {sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int(s, 2), sqlite3_column_int(s, 3)});
    });
    each_row("SELECT Id FROM vpic.VinSchema WHERE TobeQCed = 1",
             [&](sqlite3_stmt* s) { t.schemas_to_be_qced.push_back(sqlite3_column_int(s, 0)); });
    t.patterns.reserve(820000);
    each_row("SELECT Id, VinSchemaId, Keys, ElementId, AttributeId, ifnull(UpdatedOn, ifnull(CreatedOn, '')) FROM vpic.Pattern",
             [&](sqlite3_stmt* s) {
                 t.patterns.push_back({sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), text(s, 2),
                                       sqlite3_column_int(s, 3), text(s, 4), text(s, 5)});
             });
    each_row("SELECT Id, Name, ifnull(LookupTable, ''), Decode IS NOT NULL AND Decode <> '', ifnull(IsPrivate, 0), "
             "ifnull(weight, 0) FROM vpic.Element",
             [&](sqlite3_stmt* s) {
                 t.elements.push_back({sqlite3_column_int(s, 0), text(s, 1), text(s, 2), sqlite3_column_int(s, 3) != 0,
                                       sqlite3_column_int(s, 4) != 0, sqlite3_column_int(s, 5)});
             });
    each_row("SELECT MakeId, ModelId FROM vpic.Make_Model",
             [&](sqlite3_stmt* s) { t.make_models.emplace_back(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1)); });
    if (tables.count("EngineModel") && tables.count("EngineModelPattern"))
        each_row("SELECT em.Name, p.ElementId, p.AttributeId, ifnull(p.UpdatedOn, ifnull(p.CreatedOn, '')) "
                 "FROM vpic.EngineModelPattern p JOIN vpic.EngineModel em ON em.Id = p.EngineModelId",
                 [&](sqlite3_stmt* s) { t.engine_patterns.push_back({text(s, 0), sqlite3_column_int(s, 1), text(s, 2), text(s, 3)}); });
    if (tables.count("Conversion"))
        each_row("SELECT FromElementId, ToElementId, Formula FROM vpic.Conversion ORDER BY Id", [&](sqlite3_stmt* s) {
            t.conversions.push_back({sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), text(s, 2)});
        });
    // Lookup tables: every element's, plus those the WMI items name.
    std::set<std::string> lookups = {"Make", "Model", "Manufacturer", "VehicleType"};
    for (const auto& e : t.elements)
        if (!e.lookup_table.empty()) lookups.insert(e.lookup_table);
    for (const auto& name : lookups) {
        if (!safe_identifier(name) || !tables.count(name)) continue;
        each_row("SELECT CAST(Id AS TEXT), Name FROM vpic.\"" + name + "\"",
                 [&](sqlite3_stmt* s) { t.names.push_back({name, text(s, 0), text(s, 1)}); });
    }
    return t;
}

}  // namespace vehicledata::vin
