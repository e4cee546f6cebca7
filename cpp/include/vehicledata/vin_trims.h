// What the VIN answer adds to a decode, shared by the emulator's /api/vin/{vin} and the client's
// offline decoder: the 404 messages and the ranking of the catalogue's trims by what the VIN settles.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vehicledata/vin.h"

namespace vehicledata::vin {

// The calendar year now (UTC): the `current_year` the VIN answer decodes with.
int current_year_utc();

// The message of the API's 400 for a VIN as sent ("" when it is well-formed once normalized):
// "Invalid VIN '<raw>': <the rule validation_error names>".  A `raw` longer than kEchoBytes is
// echoed cut (at a UTF-8 character boundary) with its length named:
// "Invalid VIN '<its first ~kEchoBytes bytes>...' (<n> bytes): <rule>".
inline constexpr std::size_t kEchoBytes = 200;
std::string invalid_message(std::string_view raw);

// The message of the API's 404 for a decode of `vin` (normalized): unknown WMI, no VIN schema for
// the year, no model decoded; "" when the decode has a make and a model.
std::string not_found_message(std::string_view vin, const Result& r);
// not_found_message(vin, r) into `out` (replaced; its capacity reused: no allocation row after row
// in a batch); false, and `out` empty, when the decode has a make and a model.
bool not_found_message_into(std::string_view vin, const Result& r, std::string& out);

// The catalogue trims of one year/make/model: (trim id, lower("trim|trim submodel description")), by id,
// at most kMaxTrims; read as `SELECT t.id, <kTrimTextSql> FROM trims t <kTrimJoinSql> WHERE t.year = ?
// AND vm.vpic_model_id = ? AND vk.vpic_make_id = ? ORDER BY t.id` (the dataset's vPIC mapping).
inline constexpr const char* kTrimTextSql = "lower(t.trim || '|' || t.trim || ' ' || t.submodel || ' ' || t.description)";
inline constexpr const char* kTrimJoinSql =
    "JOIN vpic_models vm ON vm.model_id = t.model_id JOIN vpic_makes vk ON vk.make_id = t.make_id";
inline constexpr std::size_t kMaxTrims = 500;
// The make as the catalogue spells it, of a vPIC make id (?1).
inline constexpr const char* kCatalogueMakeSql =
    "SELECT k.name FROM makes k JOIN vpic_makes vk ON vk.make_id = k.id WHERE vk.vpic_make_id = ? LIMIT 1";
using TrimTexts = std::vector<std::pair<std::int64_t, std::string>>;
// (year, vPIC model id, vPIC make id) as one key of a trims map; false when a value does not fit
// (year 16 bits, ids 24 bits each).
bool trims_key(int year, int model_id, int make_id, std::uint64_t& key);

// (score, trim id), best first, equal scores by trim id ascending (whatever the order of `trims`:
// the first is the lowest id of the best score); with all_trims false only the trims of the best score.  The score counts the facts the VIN settles (displacement, cylinders,
// doors, drive, fuel, body/cab, trim and series words) that the trim's text names; a trim or series
// fact also holds when the catalogue trim's name is a word sequence of it ("quattro Premium Plus").
std::vector<std::pair<int, std::int64_t>> rank_trims(const Result& r, const TrimTexts& trims, bool all_trims);

}  // namespace vehicledata::vin
