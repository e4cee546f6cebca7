// The route table (as moto's urls; api.h holds the responses, search_sql.h the search SQL):
// generated from the schema's endpoint table (cpp/core/schema.cpp), so adding an endpoint
// there routes it.
//
// Thread safety: the table is built once, on first use; match_route may be called from any thread.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "call.h"
#include "vehicledata/format.h"

namespace vehicledata::emulator {

// The route of a decoded request path (trailing slashes ignored, any number of them, as CakePHP
// routes), or nullopt for an unknown path.
std::optional<Route> match_route(std::string_view path);

// Dedupes query parameters as PHP does (first position, last value).
std::vector<format::QueryParam> dedupe_params(std::vector<format::QueryParam> params);

}  // namespace vehicledata::emulator
