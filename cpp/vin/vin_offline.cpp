// The client's offline VIN decoder: see vehicledata/vin_offline.h.
#include "vehicledata/vin_offline.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstring>

namespace vehicledata::vin {

namespace {

// The ranking memo's key hash: 8 bytes at a time (a multiply and xor-shift each), the tail bytes
// read as one word, then a final mix.
std::size_t key_hash(const char* p, std::size_t n) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    if (n) {
        std::uint64_t w = 0;
        std::memcpy(&w, p, n);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    }
    h ^= h >> 29;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 32;
    return static_cast<std::size_t>(h);
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
    // The pair checked before anything is read: a missing, damaged or incomplete file is one line.
    if (std::string problem = attach_vpic(c.db, db_path, vpic_file(db_path, rel)); !problem.empty())
        throw LoadError("VIN decoder: " + problem);
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

const TrimTexts* Offline::trims_of(const Result& r, std::uint64_t& key) const {
    if (r.model_id <= 0 || !has_map_ || !trims_key(r.year, r.model_id, r.make_id, key)) return nullptr;
    auto it = trims_.find(key);
    return it == trims_.end() ? nullptr : &it->second;
}

const std::vector<std::pair<int, std::int64_t>>& Offline::ranked(const Result& r, const TrimTexts& list,
                                                                 std::uint64_t key, bool all_trims,
                                                                 RankMemo& memo,
                                                                 const std::string_view* const* facts) const {
    // The key: the list, all_trims and every element rank_trims reads (vin_trims.cpp's facts),
    // in ascending element id (4: cab type).
    static constexpr int kFacts[] = {4, kBodyClass, kCylinders, kDisplacementL, kDoors, kDriveType, kFuelPrimary,
                                     kSeries, kTrim, kFuelSecondary, kTrim2, kSeries2};
    constexpr std::size_t n = sizeof kFacts / sizeof kFacts[0];
    const std::string_view* read[n];
    if (!facts) {
        r.get_many(kFacts, n, read);
        facts = read;
    }
    const std::string_view* const* values = facts;
    // Written in place at its final size (the capacity is the memo's): no append call per value.
    std::size_t size = sizeof key + 1 + 2 * n;
    for (std::size_t i = 0; i < n; ++i) size += values[i] ? values[i]->size() : 0;
    std::string& k = memo.key.bytes;
    k.resize(size);
    char* out = k.data();
    std::memcpy(out, &key, sizeof key);
    out += sizeof key;
    *out++ = all_trims ? '1' : '0';
    for (std::size_t i = 0; i < n; ++i) {
        const std::string_view* v = values[i];
        *out++ = '\0';
        if (v) {
            std::memcpy(out, v->data(), v->size());
            out += v->size();
        }
        *out++ = v ? '\2' : '\1';
    }
    memo.key.hash = key_hash(k.data(), k.size());
    auto found = memo.ranked.find(memo.key);
    if (found != memo.ranked.end()) return found->second;
    if (memo.ranked.size() >= RankMemo::kMaxEntries) memo.ranked.clear();
    return memo.ranked.emplace(memo.key, rank_trims(r, list, all_trims)).first->second;
}

std::string_view Offline::make_of(const Result& r) const {
    if (r.make_id > 0 && has_map_) {
        auto it = make_names_.find(r.make_id);
        if (it != make_names_.end()) return it->second;
    }
    return *r.get(kMake);
}

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
    a.make = std::string(make_of(r));
    std::uint64_t key = 0;
    if (const TrimTexts* list = trims_of(r, key))
        a.trims = memo ? ranked(r, *list, key, all_trims, *memo) : rank_trims(r, *list, all_trims);
    return a;
}

std::unique_ptr<BatchMemo> Offline::take_memo() const {
    std::lock_guard<std::mutex> lock(memo_mutex_);
    if (memo_pool_.empty()) return nullptr;
    std::unique_ptr<BatchMemo> memo = std::move(memo_pool_.back());
    memo_pool_.pop_back();
    return memo;
}

void Offline::give_memo(std::unique_ptr<BatchMemo> memo) const {
    if (!memo) return;
    {
        std::lock_guard<std::mutex> lock(memo_mutex_);
        if (memo_pool_.size() < kPooledMemos) {
            memo_pool_.push_back(std::move(memo));
            return;
        }
    }
    // memo is freed here, outside the lock
}

void Offline::decode_row(std::string_view raw, int current_year, RankMemo& memo, RowAnswer& out) const {
    if (begin_row(raw, out)) finish_row(current_year, memo, out);
}

bool Offline::begin_row(std::string_view raw, RowAnswer& out) const {
    normalize_into(raw, out.vin);
    out.has_trim = false;
    out.make = std::string_view();
    out.message.clear();
    if (!validation_error(out.vin).empty()) {
        out.kind = Answer::Kind::invalid;
        out.message = invalid_message(raw);
        return false;
    }
    decoder_->answer_key(out.vin, out.key);
    return true;
}

void Offline::finish_row(int current_year, RankMemo& memo, RowAnswer& out) const {
    // The elements a batch row, the trim ranking (vin_trims.cpp's facts) and the 404 message read.
    static constexpr ElementSet kRowReads{4,       kBodyClass,   kCylinders, kDisplacementL, kDoors,     kDriveType,
                                          kEngineModel, kFuelPrimary, kMake,  kModel,      kSeries,    kTrim,
                                          kFuelSecondary, kTrim2,    kSeries2,   kErrorCode, kErrorText};
    decoder_->decode(out.vin, current_year, out.result, kRowReads);
    if (not_found_message_into(out.vin, out.result, out.message)) {
        out.kind = Answer::Kind::not_found;
        return;
    }
    out.kind = Answer::Kind::ok;
    const Result& r = out.result;
    r.get_many(RowAnswer::kElements, RowAnswer::kValues, out.values);
    out.make = make_of(r);
    std::uint64_t key = 0;
    if (const TrimTexts* list = trims_of(r, key)) {
        if (list->size() == 1) {  // the best of one trim whatever its score: no ranking needed
            out.has_trim = true;
            out.trim_id = list->front().first;
            return;
        }
        // ranked()'s kFacts, from the row's values.
        const std::string_view* const facts[] = {
            out.values[RowAnswer::eCab],    out.values[RowAnswer::eBody],   out.values[RowAnswer::eCylinders],
            out.values[RowAnswer::eDisplacement], out.values[RowAnswer::eDoors], out.values[RowAnswer::eDrive],
            out.values[RowAnswer::eFuel],   out.values[RowAnswer::eSeries], out.values[RowAnswer::eTrim],
            out.values[RowAnswer::eFuel2],  out.values[RowAnswer::eTrim2],  out.values[RowAnswer::eSeries2]};
        const auto& trims = ranked(r, *list, key, false, memo, facts);
        if (!trims.empty()) {
            out.has_trim = true;
            out.trim_id = trims.front().second;
        }
    }
}

}  // namespace vehicledata::vin
