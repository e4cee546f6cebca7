// Detail handlers: by {id} (the trims, v2 and legacy), /api/obd-codes/{code}, /api/license-plate,
// and the nested values of a record's row (used by every record writer).
#pragma once

#include <httplib.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "call.h"
#include "records.h"

namespace vehicledata::emulator {

class Api;

// Writes the nested value of `item` for the row whose plan columns are in `stmt`.
void write_nested(Api& api, std::string& out, const PlanItem& item, sqlite3_stmt* stmt, const Plan& plan, bool demo);
// Appends the legacy trim object of `trim_id` (as the deprecated trim detail: MakeModelTrim with make_model,
// make_model_trim_body/engine/mileage and the colour arrays; with `verbose`, also make_id, make,
// model) to `out`. With `demo`, only trims of the demo data-set. False (nothing appended) when
// there is no such trim. Used by /api/trims/{id} and the VIN answer's `trims`.
bool write_legacy_trim(Api& api, std::string& out, std::int64_t trim_id, bool demo, bool verbose);

// A detail whose path parameter is {id} (the trims' v2 and legacy details): the endpoint's
// record, with verbose=yes|no where the endpoint accepts it.
void detail_by_id(Api& api, const Call& call, httplib::Response& res);
void obd_detail(Api& api, const Call& call, httplib::Response& res);
void license_plate(Api& api, const Call& call, httplib::Response& res);

}  // namespace vehicledata::emulator
