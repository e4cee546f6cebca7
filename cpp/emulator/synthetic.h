// The X-Emulator-Synthetic header: which fields of a response's records have no
// public source (provenance origin 'synthetic'), read once at start-up.
#pragma once

#include <httplib.h>

#include <map>
#include <string>

#include "call.h"
#include "store.h"

namespace vehicledata::emulator {

// X-Emulator-Synthetic values per record name: the record's fields (nested ones as
// "key.field") whose provenance origin is 'synthetic'. Empty without a provenance table.
std::map<std::string, std::string> synthetic_fields(Store& store);
// Sets the header on answers carrying records (searches, details, VIN) when `synthetic` names any.
void set_synthetic_header(const std::map<std::string, std::string>& synthetic, const Call& call,
                          httplib::Response& res);

}  // namespace vehicledata::emulator
