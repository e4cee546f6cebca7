// The VIN decoder endpoint /api/vin/{vin}: the vPIC decode plus the matching trims.
#pragma once

#include <httplib.h>

#include "call.h"

namespace vehicledata::emulator {

class Api;

void vin_decode(Api& api, const Call& call, httplib::Response& res);

}  // namespace vehicledata::emulator
