// Reading the vPIC tables into vin::Tables: the one loader the emulator (over its store's
// connections) and the client's offline decoder (over a connection of its own) share.
//
// The SQL reads schema "vpic" (the dataset's vpic.db attached under that name).
// Thread safety: load_tables runs its queries through `each_row`, on the calling thread only.
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>

#include "vehicledata/vin.h"

struct sqlite3;
struct sqlite3_stmt;

namespace vehicledata::vin {

class LoadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Runs `sql` and calls `row` for each result row; throws on an SQL error.
using RowReader = std::function<void(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row)>;

// The vPIC tables (Wmi public on the day, patterns, elements, lookups...) as the decoder takes them.
Tables load_tables(const RowReader& each_row);

// A RowReader over one connection; throws LoadError naming the query when it fails, or when
// `cancel` becomes true (checked every 4096 rows).
RowReader connection_reader(sqlite3* db, const std::atomic<bool>* cancel = nullptr);

// A column of the current row as text ("" for NULL).
std::string column_text(sqlite3_stmt* s, int column);

// The SQLite URI of a file path ('%', '?', '#' escaped), with "?immutable=1" when `immutable`: no
// file locks, no journal checks per read (the dataset never changes while it is read).
std::string file_uri(const std::string& path, bool immutable = true);

}  // namespace vehicledata::vin
