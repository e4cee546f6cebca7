// Read-only SQLite store: one connection and statement cache per thread.
#include "store.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <unistd.h>
#include <vector>
#include <memory>
#include <sys/stat.h>
#include <type_traits>

#include "vehicledata/format.h"
#include "vehicledata/vin_load.h"
#include "vehicledata/schema.h"

namespace vehicledata::emulator {

namespace {

std::atomic<std::uint64_t> g_generation{1};

// The prepared statements of all threads together (bytes SQLite reports for each, plus its SQL).
// Distinct SQL texts come from distinct filter combinations (a `json` in-list of each length is
// another text), so the caches are bounded in total, as SQLite advises: past kStatementBytes, or
// past kThreadStatements in one thread, a thread finalizes its own least recently used statements.
// A thread can only finalize its own (its connection is single-threaded); one whose cache is empty
// while others hold the budget uses each new statement once. So the total stays under
// kStatementBytes plus one statement per thread. 16 MiB holds a few hundred real query shapes;
// a flood of new shapes never reuses one, and with the VIN decoder (about 115 MB), the response
// cache (64 MB) and the mapped pages the emulator's RSS then levels off near 400 MB (issue 40;
// at 64 MiB it was 480 MB).
constexpr std::int64_t kStatementBytes = 16 << 20;
constexpr std::size_t kThreadStatements = 1000;
std::atomic<std::int64_t> g_statement_bytes{0};

struct Connection {
    struct Entry {
        sqlite3_stmt* stmt = nullptr;
        std::int64_t bytes = 0;
        int users = 0;  // Statements borrowing it now (never finalized then)
        std::list<const std::string*>::iterator used;
    };
    sqlite3* db = nullptr;
    std::unordered_map<std::string, Entry> statements;
    std::list<const std::string*> lru;  // keys of `statements`, most recently used first
    std::int64_t bytes = 0;             // this connection's share of g_statement_bytes

    // Finalizes least recently used statements (none borrowed now) until this cache holds fewer
    // than kThreadStatements and all caches together fit kStatementBytes less `room`, or nothing
    // more can go. True when a new statement of `room` bytes may be kept.
    bool make_room(std::int64_t room) {
        auto it = lru.end();
        while (it != lru.begin() && (statements.size() >= kThreadStatements ||
                                     g_statement_bytes.load(std::memory_order_relaxed) + room > kStatementBytes)) {
            --it;
            auto found = statements.find(**it);
            if (found->second.users > 0) continue;
            forget(found);
            it = lru.erase(it);
        }
        return statements.size() < kThreadStatements &&
               g_statement_bytes.load(std::memory_order_relaxed) + room <= kStatementBytes;
    }
    void forget(std::unordered_map<std::string, Entry>::iterator found) {
        sqlite3_finalize(found->second.stmt);
        bytes -= found->second.bytes;
        g_statement_bytes.fetch_sub(found->second.bytes, std::memory_order_relaxed);
        statements.erase(found);
    }
    ~Connection() {
        for (auto& [sql, e] : statements) sqlite3_finalize(e.stmt);
        g_statement_bytes.fetch_sub(bytes, std::memory_order_relaxed);
        if (db) sqlite3_close_v2(db);
    }
};

// The database never changes while the emulator runs: open it as immutable
// (no file locks, no journal checks per read transaction): vin::file_uri (vehicledata/vin_load.h).
using vin::file_uri;

sqlite3* open_readonly(const std::string& path, const std::string& vpic_path = {}, bool immutable = true) {
    static const bool configured = [] {
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);  // no global allocator mutex (before sqlite3_initialize)
        return true;
    }();
    (void)configured;
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(file_uri(path, immutable).c_str(), &db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        if (db) sqlite3_close_v2(db);
        throw StoreError("cannot open database " + path + ": " + msg);
    }
    sqlite3_busy_timeout(db, 2000);
    if (!vpic_path.empty()) {
        sqlite3_stmt* a = nullptr;
        if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS vpic", -1, &a, nullptr) == SQLITE_OK) {
            const std::string uri = file_uri(vpic_path);
            sqlite3_bind_text(a, 1, uri.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_step(a);
        }
        sqlite3_finalize(a);
    }
    sqlite3_exec(db, "PRAGMA query_only = 1; PRAGMA cache_size = -32768; PRAGMA mmap_size = 268435456;", nullptr,
                 nullptr, nullptr);
    return db;
}

// Connections of this thread, by store generation.
thread_local std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> t_connections;
// How many of each store's retired generations this thread has released.
thread_local std::unordered_map<const void*, std::size_t> t_released;

}  // namespace

Statement::~Statement() {
    if (users_) --*users_;
    if (s_ && owned_) {
        sqlite3_finalize(s_);
    } else if (s_) {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }
}

void Statement::bind(const std::vector<query::Scalar>& values) {
    int i = 1;
    for (const auto& v : values) {
        int rc = std::visit(
            [&](const auto& x) -> int {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, std::monostate>) return sqlite3_bind_null(s_, i);
                else if constexpr (std::is_same_v<T, bool>) return sqlite3_bind_int64(s_, i, x ? 1 : 0);
                else if constexpr (std::is_same_v<T, std::int64_t>) return sqlite3_bind_int64(s_, i, x);
                else if constexpr (std::is_same_v<T, double>) return sqlite3_bind_double(s_, i, x);
                else return sqlite3_bind_text(s_, i, x.data(), static_cast<int>(x.size()), SQLITE_TRANSIENT);
            },
            v);
        if (rc != SQLITE_OK) throw StoreError(std::string("bind failed: ") + sqlite3_errstr(rc));
        ++i;
    }
}

bool Statement::step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(std::string("query failed: ") + sqlite3_errmsg(sqlite3_db_handle(s_)));
}

Store::Store(std::string path) : path_(std::move(path)), generation_(g_generation.fetch_add(1)) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw StoreError("database not found: " + path_ +
                         " (build it with `vehicledata dataset build`, or pass --db PATH)");
    Connection probe;
    probe.db = open_readonly(path_);
    for (const auto& r : schema::records()) {
        if (!r.primary) continue;
        // Every column of the schema table must be there: a stale database fails here, not mid-request.
        std::string cols;
        for (const auto& f : r.fields) {
            if (f.type == schema::Type::Nested) continue;
            if (!cols.empty()) cols += ", ";
            cols += f.sql();
        }
        std::string sql = "SELECT " + (cols.empty() ? std::string("1") : cols) + " FROM " + r.table + " LIMIT 0";
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(probe.db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
            std::string msg = sqlite3_errmsg(probe.db);
            throw StoreError("database " + path_ + " does not match the schema (table " + r.table + ": " + msg +
                             "); rebuild it with `vehicledata dataset build`");
        }
        sqlite3_finalize(s);
    }
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(probe.db, "SELECT key, value FROM meta", -1, &s, nullptr) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            auto k = sqlite3_column_text(s, 0);
            auto v = sqlite3_column_text(s, 1);
            if (k) meta_[reinterpret_cast<const char*>(k)] = v ? reinterpret_cast<const char*>(v) : "";
        }
        sqlite3_finalize(s);
    }
    last_updated_ = meta("built_at");
    // The vPIC tables for VIN decoding, when the dataset has them: checked here, so that a
    // missing, damaged or incomplete file stops the start with one line (vin::attach_vpic).
    if (std::string rel = meta("vpic_path"); !rel.empty()) {
        const std::string candidate = vin::vpic_file(path_, rel);
        std::string problem = vin::attach_vpic(probe.db, path_, candidate);
        if (!problem.empty()) throw StoreError(problem);
        vpic_path_ = candidate;
    }
}

Store::~Store() {
    if (writer_) sqlite3_close_v2(writer_);
    if (!copy_.empty()) ::unlink(copy_.c_str());
}

std::vector<std::int64_t> Store::touch(const std::string& table, const std::vector<std::int64_t>& ids,
                                       const std::string& modified, std::int64_t modified_utc) {
    std::lock_guard<std::mutex> lock(touch_mutex_);
    auto fail = [&](const std::string& what) -> StoreError {
        return StoreError("touch: " + what + ": " + (writer_ ? sqlite3_errmsg(writer_) : "no connection"));
    };
    if (copy_.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/vehicledata-touched-XXXXXX";
        std::vector<char> name(templ.begin(), templ.end());
        name.push_back('\0');
        int fd = ::mkstemp(name.data());
        if (fd < 0) throw StoreError("touch: cannot create a private copy of the database in " + templ);
        ::close(fd);
        std::error_code ec;
        std::filesystem::copy_file(path_, name.data(), std::filesystem::copy_options::overwrite_existing, ec);
        if (ec) {
            ::unlink(name.data());
            throw StoreError("touch: cannot copy " + path_ + ": " + ec.message());
        }
        if (sqlite3_open_v2(name.data(), &writer_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK ||
            sqlite3_exec(writer_, "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr) != SQLITE_OK) {
            StoreError e = fail("cannot open the private copy");
            sqlite3_close_v2(writer_);
            writer_ = nullptr;
            ::unlink(name.data());
            throw e;
        }
        sqlite3_busy_timeout(writer_, 5000);
        copy_ = name.data();
        retired_.push_back(generation_.load());
        generation_.store(g_generation.fetch_add(1), std::memory_order_release);
        retired_count_.store(retired_.size(), std::memory_order_release);
    }
    std::vector<std::int64_t> missing;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_exec(writer_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) throw fail("cannot begin");
    const std::string sql = "UPDATE " + table + " SET modified = ?1 WHERE id = ?2";
    if (sqlite3_prepare_v2(writer_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
        StoreError e = fail("cannot prepare");
        sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw e;
    }
    sqlite3_bind_text(s, 1, modified.data(), static_cast<int>(modified.size()), SQLITE_TRANSIENT);
    for (std::int64_t id : ids) {
        sqlite3_bind_int64(s, 2, id);
        if (sqlite3_step(s) != SQLITE_DONE) {
            StoreError e = fail("cannot update");
            sqlite3_finalize(s);
            sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
            throw e;
        }
        if (sqlite3_changes(writer_) == 0) missing.push_back(id);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    if (sqlite3_exec(writer_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
        StoreError e = fail("cannot commit");
        sqlite3_exec(writer_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw e;
    }
    // Same-form Eastern wall times compare as text.
    if (std::string when = format::eastern_datetime(modified_utc); when > last_updated_) last_updated_ = std::move(when);
    data_generation_.fetch_add(1, std::memory_order_acq_rel);
    std::lock_guard<std::mutex> ids_lock(ids_mutex_);
    ids_.clear();
    cached_id_count_ = 0;
    cached_key_bytes_ = 0;
    return missing;
}

void Store::untouch() {
    std::lock_guard<std::mutex> lock(touch_mutex_);
    if (copy_.empty()) return;
    sqlite3_close_v2(writer_);
    writer_ = nullptr;
    ::unlink(copy_.c_str());  // connections still open keep reading it until released
    copy_.clear();
    last_updated_ = meta("built_at");
    retired_.push_back(generation_.load());
    generation_.store(g_generation.fetch_add(1), std::memory_order_release);
    retired_count_.store(retired_.size(), std::memory_order_release);
    data_generation_.fetch_add(1, std::memory_order_acq_rel);
    std::lock_guard<std::mutex> ids_lock(ids_mutex_);
    ids_.clear();
    cached_id_count_ = 0;
    cached_key_bytes_ = 0;
}

void Store::release_retired() {
    const std::size_t n = retired_count_.load(std::memory_order_acquire);
    if (n == 0) return;  // never touched: the hot path stops here
    std::size_t& seen = t_released[this];
    if (seen >= n) return;
    std::vector<std::uint64_t> retired;
    {
        std::lock_guard<std::mutex> lock(touch_mutex_);
        retired.assign(retired_.begin() + static_cast<std::ptrdiff_t>(seen), retired_.end());
        seen = retired_.size();
    }
    for (std::uint64_t g : retired) t_connections.erase(g);
}

Statement Store::statement(const std::string& sql) {
    auto found = t_connections.find(generation_.load(std::memory_order_acquire));
    if (found == t_connections.end()) {
        std::lock_guard<std::mutex> lock(touch_mutex_);  // generation and file agree under the lock
        auto& c = t_connections[generation_.load()];
        if (!c) {
            c = std::make_unique<Connection>();
            c->db = copy_.empty() ? open_readonly(path_, vpic_path_) : open_readonly(copy_, vpic_path_, false);
        }
        found = t_connections.find(generation_.load());
    }
    Connection* conn = found->second.get();
    auto it = conn->statements.find(sql);
    if (it != conn->statements.end()) {
        Connection::Entry& e = it->second;
        conn->lru.splice(conn->lru.begin(), conn->lru, e.used);
        return Statement(e.stmt, &e.users);
    }
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(conn->db, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                           nullptr) != SQLITE_OK)
        throw StoreError(std::string("cannot prepare query: ") + sqlite3_errmsg(conn->db) + " [" + sql + "]");
    // Kept in the cache when it fits (making room by the LRU rule above); else used once and finalized.
    const std::int64_t bytes = sqlite3_stmt_status(s, SQLITE_STMTSTATUS_MEMUSED, 0) +
                               2 * static_cast<std::int64_t>(sql.size()) + 128;
    if (!conn->make_room(bytes)) return Statement(s, true);
    auto [entry, inserted] = conn->statements.emplace(sql, Connection::Entry{s, bytes, 0, {}});
    conn->lru.push_front(&entry->first);
    entry->second.used = conn->lru.begin();
    conn->bytes += bytes;
    g_statement_bytes.fetch_add(bytes, std::memory_order_relaxed);
    return Statement(s, &entry->second.users);
}

std::string Store::meta(const std::string& key) const {
    auto it = meta_.find(key);
    return it == meta_.end() ? std::string() : it->second;
}

std::string Store::last_updated() const {
    std::lock_guard<std::mutex> lock(touch_mutex_);
    return last_updated_;
}

std::shared_ptr<const Store::Ids> Store::cached_ids(const std::string& key) const {
    std::lock_guard<std::mutex> lock(ids_mutex_);
    auto it = ids_.find(key);
    return it == ids_.end() ? nullptr : it->second;
}

void Store::remember_ids(const std::string& key, std::shared_ptr<const Ids> ids, std::uint64_t generation) {
    std::lock_guard<std::mutex> lock(ids_mutex_);
    if (generation != data_generation()) return;  // computed before a touch
    if (cached_id_count_ + ids->size() > kMaxCachedIds || ids_.size() >= 100000 ||
        cached_key_bytes_ + key.size() > kMaxCachedKeyBytes) {
        ids_.clear();
        cached_id_count_ = 0;
        cached_key_bytes_ = 0;
    }
    if (ids_.emplace(key, ids).second) {
        cached_id_count_ += ids->size();
        cached_key_bytes_ += key.size();
    }
}

std::string Store::memory_json() const {
    std::size_t ids = 0, key_bytes = 0;
    {
        std::lock_guard<std::mutex> lock(ids_mutex_);
        ids = cached_id_count_;
        key_bytes = cached_key_bytes_;
    }
    return "{\"statement_bytes\":" + std::to_string(g_statement_bytes.load(std::memory_order_relaxed)) +
           ",\"statement_max_bytes\":" + std::to_string(kStatementBytes) +
           ",\"cached_ids\":" + std::to_string(ids) + ",\"cached_id_key_bytes\":" + std::to_string(key_bytes) + "}";
}

}  // namespace vehicledata::emulator
