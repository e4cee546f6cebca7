// Loads the vPIC tables (schema "vpic" of the store's connections) into a vin::Decoder, once.
//
// Thread safety: call from one thread at start-up; the Decoder is then read-only.
#pragma once

#include <memory>

#include "vehicledata/emulator/store.h"
#include "vehicledata/vin.h"

namespace vehicledata::emulator {

// The decoder over the store's vPIC tables, or nullptr when the store has none.
// Throws StoreError when the tables are unreadable.
std::unique_ptr<const vin::Decoder> load_vin_decoder(Store& store);

}  // namespace vehicledata::emulator
