// The client's offline VIN decoder: see vehicledata/vin_offline.h.
#include "vehicledata/vin_offline.h"

#include <sqlite3.h>
#include <sys/stat.h>


namespace vehicledata::vin {

namespace {

// (year, model, make) as one key; false when an id does not fit its 24 bits (as the emulator's cache).
bool trims_key(int year, int model_id, int make_id, std::uint64_t& key) {
    if (year < 0 || year >= 1 << 16 || model_id < 0 || model_id >= 1 << 24 || make_id < 0 || make_id >= 1 << 24) return false;
    key = (static_cast<std::uint64_t>(year) << 48) | (static_cast<std::uint64_t>(model_id) << 24) |
          static_cast<std::uint64_t>(make_id);
    return true;
}

std::string file_uri(const std::string& path) {
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
    return uri + "?immutable=1";
}

bool is_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

struct Connection {
    sqlite3* db = nullptr;
    ~Connection() { if (db) sqlite3_close_v2(db); }
};

}  // namespace

Offline::Offline(const std::string& db_path) : path_(db_path) {
    if (!is_file(db_path))
        throw LoadError("VIN decoder: database not found: " + db_path + " (build it with `vehicledata dataset build`)");
    Connection c;
    if (sqlite3_open_v2(file_uri(db_path).c_str(), &c.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                        nullptr) != SQLITE_OK)
        throw LoadError("VIN decoder: cannot open database " + db_path + ": " +
                        (c.db ? sqlite3_errmsg(c.db) : "out of memory"));
    RowReader each_row = connection_reader(c.db);
    std::string rel;
    try {
        each_row("SELECT value FROM meta WHERE key = 'vpic_path'", [&](sqlite3_stmt* s) { rel = column_text(s, 0); });
    } catch (const LoadError& e) {
        throw LoadError("VIN decoder: " + db_path + " is not a vehicledata dataset (" + e.what() + ")");
    }
    if (rel.empty()) throw LoadError("VIN decoder: the dataset " + db_path + " has no vPIC tables (meta vpic_path)");
    std::string vpic = rel;
    if (rel[0] != '/') {
        const auto slash = db_path.rfind('/');
        vpic = (slash == std::string::npos ? std::string(".") : db_path.substr(0, slash)) + "/" + rel;
    }
    if (!is_file(vpic)) throw LoadError("VIN decoder: the vPIC tables of " + db_path + " are missing: " + vpic);
    {
        sqlite3_stmt* a = nullptr;
        int rc = sqlite3_prepare_v2(c.db, "ATTACH DATABASE ? AS vpic", -1, &a, nullptr);
        if (rc == SQLITE_OK) {
            const std::string uri = file_uri(vpic);
            sqlite3_bind_text(a, 1, uri.c_str(), -1, SQLITE_TRANSIENT);
            rc = sqlite3_step(a);
        }
        sqlite3_finalize(a);
        if (rc != SQLITE_DONE && rc != SQLITE_OK)
            throw LoadError("VIN decoder: cannot attach " + vpic + ": " + sqlite3_errmsg(c.db));
    }
    decoder_ = std::make_unique<const Decoder>(load_tables(each_row));

    each_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vpic_models'",
             [&](sqlite3_stmt*) { has_map_ = true; });
    if (!has_map_) return;
    // Every year/model/make's trims at once, each list by id as the emulator's query orders it.
    each_row(std::string("SELECT t.year, vm.vpic_model_id, vk.vpic_make_id, t.id, ") + kTrimTextSql + " FROM trims t " +
                 kTrimJoinSql + " ORDER BY t.year, vm.vpic_model_id, vk.vpic_make_id, t.id",
             [&](sqlite3_stmt* s) {
                 std::uint64_t key = 0;
                 if (!trims_key(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int(s, 2), key)) return;
                 TrimTexts& list = trims_[key];
                 if (list.size() < kMaxTrims) list.emplace_back(sqlite3_column_int64(s, 3), column_text(s, 4));
             });
    std::vector<int> make_ids;
    each_row("SELECT DISTINCT vpic_make_id FROM vpic_makes", [&](sqlite3_stmt* s) { make_ids.push_back(sqlite3_column_int(s, 0)); });
    for (int id : make_ids) {
        // The emulator's query, make by make (its LIMIT 1 picks the same row).
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(c.db, kCatalogueMakeSql, -1, &st, nullptr) != SQLITE_OK)
            throw LoadError("VIN decoder: " + std::string(sqlite3_errmsg(c.db)));
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            std::string name = column_text(st, 0);
            if (!name.empty()) make_names_.emplace(id, std::move(name));
        }
        sqlite3_finalize(st);
    }
}

Offline::~Offline() = default;

Answer Offline::decode(std::string_view raw, bool all_trims, int current_year, RankMemo* memo) const {
    Answer a;
    a.vin = normalize(raw);
    if (!validation_error(a.vin).empty()) {
        a.kind = Answer::Kind::invalid;
        a.message = invalid_message(raw);
        return a;
    }
    a.result = decoder_->decode(a.vin, current_year);
    if (std::string missing = not_found_message(a.vin, a.result); !missing.empty()) {
        a.kind = Answer::Kind::not_found;
        a.message = std::move(missing);
        return a;
    }
    const Result& r = a.result;
    a.make = std::string(*r.get(kMake));
    if (r.make_id > 0 && has_map_) {
        auto it = make_names_.find(r.make_id);
        if (it != make_names_.end()) a.make = it->second;
    }
    std::uint64_t key = 0;
    if (r.model_id > 0 && has_map_ && trims_key(r.year, r.model_id, r.make_id, key)) {
        auto it = trims_.find(key);
        if (it != trims_.end()) {
            if (!memo) {
                a.trims = rank_trims(r, it->second, all_trims);
            } else {
                // The key: the list, all_trims and every element rank_trims reads (vin_trims.cpp's facts).
                std::string k(reinterpret_cast<const char*>(&key), sizeof key);
                k.push_back(all_trims ? '1' : '0');
                static constexpr int kFacts[] = {kBodyClass, 4, kCylinders, kDisplacementL, kDoors, kDriveType,
                                                 kFuelPrimary, kTrim, kSeries, kFuelSecondary, kTrim2, kSeries2};
                for (int e : kFacts) {
                    k.push_back('\0');
                    if (const std::string_view* v = r.get(e)) k.append(*v);
                    else k.push_back('\1');
                }
                auto found = memo->ranked.find(k);
                if (found != memo->ranked.end()) {
                    a.trims = found->second;
                } else {
                    a.trims = rank_trims(r, it->second, all_trims);
                    if (memo->ranked.size() >= RankMemo::kMaxEntries) memo->ranked.clear();
                    memo->ranked.emplace(std::move(k), a.trims);
                }
            }
        }
    }
    return a;
}

}  // namespace vehicledata::vin
