// Reads the vPIC tables once into vin::Tables and compiles the decoder.
#include <malloc.h>

#include <set>

#include "vin_load.h"

namespace vehicledata::emulator {

namespace {

std::string text(sqlite3_stmt* s, int c) {
    const unsigned char* t = sqlite3_column_text(s, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(s, c)))
             : std::string();
}

const std::atomic<bool>* g_cancel = nullptr;  // set for the duration of one load (one thread)

template <typename F>
void each_row(Store& store, const std::string& sql, F&& f) {
    Statement st = store.statement(sql);
    for (std::size_t n = 0; st.step(); ++n) {
        if ((n & 4095) == 0 && g_cancel && g_cancel->load(std::memory_order_relaxed))
            throw StoreError("VIN tables: load cancelled");
        f(st.get());
    }
}

bool safe_identifier(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

}  // namespace

std::unique_ptr<const vin::Decoder> load_vin_decoder(Store& store, const std::atomic<bool>* cancel) {
    if (!store.has_vpic()) return nullptr;
    g_cancel = cancel;
    vin::Tables t;
    std::set<std::string> tables;
    each_row(store, "SELECT name FROM vpic.sqlite_master WHERE type IN ('table', 'view')",
             [&](sqlite3_stmt* s) { tables.insert(text(s, 0)); });
    // WMIs publicly available (spVinDecode_Core: PublicAvailabilityDate <= getdate()).
    each_row(store,
             "SELECT Id, Wmi, ifnull(ManufacturerId, 0), ifnull(VehicleTypeId, 0), ifnull(TruckTypeId, 0) FROM vpic.Wmi "
             "WHERE PublicAvailabilityDate <= strftime('%Y-%m-%d %H:%M:%S', 'now')",
             [&](sqlite3_stmt* s) {
                 t.wmis.push_back({sqlite3_column_int(s, 0), text(s, 1), sqlite3_column_int(s, 2), sqlite3_column_int(s, 3),
                                   sqlite3_column_int(s, 4)});
             });
    each_row(store, "SELECT WmiId, MakeId FROM vpic.Wmi_Make",
             [&](sqlite3_stmt* s) { t.wmi_makes.emplace_back(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1)); });
    each_row(store, "SELECT WmiId, VinSchemaId, YearFrom, ifnull(YearTo, 0) FROM vpic.Wmi_VinSchema",
             [&](sqlite3_stmt* s) {
                 t.wmi_schemas.push_back({sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int(s, 2),
                                          sqlite3_column_int(s, 3)});
             });
    each_row(store, "SELECT Id FROM vpic.VinSchema WHERE TobeQCed = 1",
             [&](sqlite3_stmt* s) { t.schemas_to_be_qced.push_back(sqlite3_column_int(s, 0)); });
    t.patterns.reserve(820000);
    each_row(store,
             "SELECT Id, VinSchemaId, Keys, ElementId, AttributeId, ifnull(UpdatedOn, ifnull(CreatedOn, '')) FROM vpic.Pattern",
             [&](sqlite3_stmt* s) {
                 t.patterns.push_back({sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), text(s, 2),
                                       sqlite3_column_int(s, 3), text(s, 4), text(s, 5)});
             });
    each_row(store,
             "SELECT Id, Name, ifnull(LookupTable, ''), Decode IS NOT NULL AND Decode <> '', ifnull(IsPrivate, 0), "
             "ifnull(weight, 0) FROM vpic.Element",
             [&](sqlite3_stmt* s) {
                 t.elements.push_back({sqlite3_column_int(s, 0), text(s, 1), text(s, 2), sqlite3_column_int(s, 3) != 0,
                                       sqlite3_column_int(s, 4) != 0, sqlite3_column_int(s, 5)});
             });
    each_row(store, "SELECT MakeId, ModelId FROM vpic.Make_Model",
             [&](sqlite3_stmt* s) { t.make_models.emplace_back(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1)); });
    if (tables.count("EngineModel") && tables.count("EngineModelPattern"))
        each_row(store,
                 "SELECT em.Name, p.ElementId, p.AttributeId, ifnull(p.UpdatedOn, ifnull(p.CreatedOn, '')) "
                 "FROM vpic.EngineModelPattern p JOIN vpic.EngineModel em ON em.Id = p.EngineModelId",
                 [&](sqlite3_stmt* s) {
                     t.engine_patterns.push_back({text(s, 0), sqlite3_column_int(s, 1), text(s, 2), text(s, 3)});
                 });
    if (tables.count("Conversion"))
        each_row(store, "SELECT FromElementId, ToElementId, Formula FROM vpic.Conversion ORDER BY Id",
                 [&](sqlite3_stmt* s) {
                     t.conversions.push_back({sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), text(s, 2)});
                 });
    // Lookup tables: every element's, plus those the WMI items name.
    std::set<std::string> lookups = {"Make", "Model", "Manufacturer", "VehicleType"};
    for (const auto& e : t.elements)
        if (!e.lookup_table.empty()) lookups.insert(e.lookup_table);
    for (const auto& name : lookups) {
        if (!safe_identifier(name) || !tables.count(name)) continue;
        each_row(store, "SELECT CAST(Id AS TEXT), Name FROM vpic.\"" + name + "\"",
                 [&](sqlite3_stmt* s) { t.names.push_back({name, text(s, 0), text(s, 1)}); });
    }
    auto decoder = std::make_unique<const vin::Decoder>(std::move(t));
    malloc_trim(0);  // the row copies are gone: give their pages back
    return decoder;
}

VinDecoderSlot::VinDecoderSlot(Store& store) {
    thread_ = std::thread([this, &store] {
        std::unique_ptr<const vin::Decoder> d;
        std::string error;
        try {
            d = load_vin_decoder(store, &cancel_);
        } catch (const std::exception& e) {
            error = e.what();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        decoder_ = std::move(d);
        error_ = std::move(error);
        done_ = true;
        ready_.store(decoder_.get(), std::memory_order_release);
        done_cv_.notify_all();
    });
}

VinDecoderSlot::~VinDecoderSlot() {
    cancel_ = true;
    if (thread_.joinable()) thread_.join();
}

const vin::Decoder* VinDecoderSlot::get() {
    if (const vin::Decoder* d = ready_.load(std::memory_order_acquire)) return d;
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return done_; });
    if (!error_.empty()) throw StoreError("VIN tables: " + error_);
    return decoder_.get();
}

}  // namespace vehicledata::emulator
