// Read-only SQLite access for the emulator.
//
// Thread safety: a Store is shared by all worker threads.  Each thread gets its
// own connection (SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX) with its own cache
// of prepared statements (all caches together bounded, LRU), created on first use; statements returned by
// statement() belong to the calling thread only.  The result cache is guarded by
// a mutex.  The shared database file is never written: the touch control
// (touch()) writes a private copy made on its first use, which connections
// then read (without the immutable flag) until untouch().
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "vehicledata/query.h"

namespace vehicledata::emulator {

class StoreError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A statement borrowed from the thread's cache; reset and unbound when it goes out of scope.
class Statement {
public:
    explicit Statement(sqlite3_stmt* s, bool owned = false) : s_(s), owned_(owned) {}
    // One of the cache's: `users` counts the borrowers (the cache keeps it while any remain).
    Statement(sqlite3_stmt* s, int* users) : s_(s), owned_(false), users_(users) { ++*users_; }
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    sqlite3_stmt* get() const { return s_; }
    // Binds values to ?1.. in order.
    void bind(const std::vector<query::Scalar>& values);
    // sqlite3_step; true on SQLITE_ROW, false on SQLITE_DONE; throws StoreError otherwise.
    bool step();

private:
    sqlite3_stmt* s_;
    bool owned_;  // finalized on destruction (not in the thread's cache)
    int* users_ = nullptr;
};

class Store {
public:
    // Opens the database read-only and checks that it has the schema's tables, and the vPIC file
    // it names. Throws StoreError naming the problem in one line (missing file, missing table, a
    // vPIC file missing, damaged or incomplete).
    explicit Store(std::string path);
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    // The calling thread's prepared statement for sql. Each thread caches its statements, all
    // threads' caches together bounded in bytes (least recently used out first; store.cpp).
    Statement statement(const std::string& sql);
    const std::string& path() const { return path_; }
    // meta(key, value) rows, read at open ("" when absent).
    std::string meta(const std::string& key) const;
    // True when the dataset has vPIC tables (meta vpic_path, relative to the database's folder);
    // they are then attached to every connection as schema "vpic". A dataset that names a vPIC
    // file that is missing, damaged or incomplete is a StoreError at construction (one line
    // naming the file: vin::attach_vpic).
    bool has_vpic() const { return !vpic_path_.empty(); }

    // Result sets of searches as sorted rowid lists, keyed by the query text
    // and its parameters; remember_ids() drops a list computed under an older
    // data_generation() (taken before the query ran).
    // The cache holds at most kMaxCachedIds rowids and kMaxCachedKeyBytes of keys (a key holds
    // the query's SQL, as long as its filters); past either it starts over.
    using Ids = std::vector<std::int64_t>;
    std::shared_ptr<const Ids> cached_ids(const std::string& key) const;
    void remember_ids(const std::string& key, std::shared_ptr<const Ids> ids, std::uint64_t generation);
    static constexpr std::size_t kMaxCachedIds = 8u << 20;
    static constexpr std::size_t kMaxCachedKeyBytes = 8u << 20;

    // Changes whenever the data change (touch, untouch): caches of answers compare it.
    std::uint64_t data_generation() const { return data_generation_.load(std::memory_order_acquire); }
    // Sets `modified` of the rows of `table` whose id is in `ids`, in a private
    // writable copy of the database (made on the first touch, in TMPDIR); returns
    // the ids that are not in the table. The caller validates table and text.
    // `modified_utc` is the same instant as `modified`: last_updated() moves to it when later.
    std::vector<std::int64_t> touch(const std::string& table, const std::vector<std::int64_t>& ids,
                                    const std::string& modified, std::int64_t modified_utc);
    // Drops the private copy: answers come from the shared file again (and last_updated()
    // is the database's built_at again).
    void untouch();
    // When the data last changed, US Eastern "YYYY-MM-DD HH:MM:SS" (as /api/data-feeds/last-updated
    // serves it): the database's built_at, or the latest touch's `modified` when later ("" when
    // the database has no built_at and nothing was touched).
    std::string last_updated() const;
    // Closes this thread's connections to a dropped copy; call where the thread
    // holds no Statement (before handling a request).
    void release_retired();
    // The store's caches as a JSON object (for /_emulator/stats): the prepared statements' bytes
    // (as SQLite counts them) and their bound, and the search-id cache's rowids and key bytes.
    std::string memory_json() const;

private:
    std::string path_;
    std::string vpic_path_;
    std::atomic<std::uint64_t> generation_;  // keys the threads' connections; new on switching files
    std::atomic<std::uint64_t> data_generation_{1};
    mutable std::mutex touch_mutex_;  // guards copy_, writer_, retired_
    std::string copy_;                // the private copy ("" before the first touch)
    sqlite3* writer_ = nullptr;       // read-write connection to copy_
    std::vector<std::uint64_t> retired_;
    std::atomic<std::size_t> retired_count_{0};
    std::map<std::string, std::string> meta_;
    std::string last_updated_;        // guarded by touch_mutex_; built_at until a later touch
    mutable std::mutex ids_mutex_;
    std::unordered_map<std::string, std::shared_ptr<const Ids>> ids_;
    std::size_t cached_id_count_ = 0;
    std::size_t cached_key_bytes_ = 0;
};

}  // namespace vehicledata::emulator
