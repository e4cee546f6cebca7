// The emulator's defaults as one JSON document, printed by `vehicledata-emulator --print-defaults`:
// the option defaults (Options) and the demo accounts (default_accounts()). vehicledata.testing
// reads it instead of restating them (docs/emulator.md, "Defaults").
#pragma once

#include <string>

namespace vehicledata::emulator {

// {"options": {flag name with '_' for '-': default, ...}, "accounts": {name: {api_token,
// api_secret, subscribed, data_feed, rate_limit_type}, ...}}, keys in a fixed order.
std::string defaults_json();

}  // namespace vehicledata::emulator
