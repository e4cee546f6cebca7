// Reading the vPIC tables into vin::Tables: the one loader the emulator (over its store's
// connections) and the client's offline decoder (over a connection of its own) share.
//
// The SQL reads schema "vpic" (the dataset's vPIC file, vpic-<id>.db, attached under that name).
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

// The vPIC tables file of the dataset `dataset` whose meta vpic_path is `rel`: relative to the
// dataset's folder (as the builder writes it), or absolute.
std::string vpic_file(const std::string& dataset, const std::string& rel);

// Attaches the vPIC tables file `file` to `db`, a read-only connection to the dataset `dataset`
// (whose meta names the file), as schema "vpic", and checks that they are the tables the dataset
// was built with, before anything is read from them: the file is there, has the size the build
// wrote (meta vpic_bytes), is a readable SQLite database and has the tables the decoder cannot do
// without (Wmi, Wmi_Make, Wmi_VinSchema, VinSchema, Pattern, Element, Make_Model, Make, Model) and
// every table the build recorded (meta vpic_tables). Returns "" when they are, else one line
// naming the file, what is wrong and what to do (the file then stays detached).
std::string attach_vpic(sqlite3* db, const std::string& dataset, const std::string& file);

// The SQLite URI of a file path ('%', '?', '#' escaped), with "?immutable=1" when `immutable`: no
// file locks, no journal checks per read (the dataset never changes while it is read).
std::string file_uri(const std::string& path, bool immutable = true);

}  // namespace vehicledata::vin
