// Reads the vPIC tables once into vin::Tables (see vehicledata/vin_load.h).
#include "vehicledata/vin_load.h"

#include <sqlite3.h>

#include <cctype>
#include <set>

namespace vehicledata::vin {

namespace {

bool safe_identifier(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

}  // namespace

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
