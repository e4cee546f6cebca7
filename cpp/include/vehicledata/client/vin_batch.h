// Batch VIN decoding into pages (then Arrow through arrow_export.h): vehicledata.vin.Decoder.decode_many.
//
// One row per input VIN, in input order, with the columns vin_batch_columns() names:
//   vin        the VIN normalized (trimmed, upper-cased); as given when it is not well-formed
//   year       the decoded model year (int64)
//   make       as the catalogue spells it (the API's `make`), model, trim (vPIC's)
//   series, body, drive, fuel   vPIC's Series, Body Class, Drive Type, Fuel Type - Primary
//   engine     "<displacement>L <cylinders>cyl <engine model>", the parts vPIC decodes
//   error_code vPIC's error code(s) ("0": clean); "invalid_vin" (the API's 400) or "not_found"
//              (the API's 404) when the API answers no record
//   error_text vPIC's error text; for invalid_vin / not_found, the API's message
//   trim_id    the catalogue's best trim (the first of the API's `trims`), int64
// A row the API refuses has only vin, error_code and error_text.  No VIN stops the batch.
// Each worker keeps the decoded rows it wrote by vin::Decoder::answer_key: a VIN of a key seen
// before (most often the same vehicle with another serial number) is not decoded again; its row
// is the one a decode would give, byte for byte.  The workers' memos go back to the Offline's
// pool (vin::Offline::take_memo / give_memo) after the call: the next batch on the same
// Offline starts with them (bounded: at most 65,536 rows a memo, kPooledMemos memos).
//
// The pages' buffers are reused: once the last Arrow array over a page is released, the page
// goes back to a small process-wide pool (at most 4 pages and 512 MiB of reservations) and the
// next batch writes into it, so that a steady stream of batches does not map and fault in fresh
// memory for every call.
//
// Thread safety: decode_vin_batch runs its own workers over a shared, immutable vin::Offline; the
// page pool is locked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vehicledata/client/page.h"
#include "vehicledata/vin_offline.h"

namespace vehicledata::client {

// The column names, in order.
const std::vector<std::string>& vin_batch_columns();

// A string array to decode, as Arrow lays it out (utf8: int32 offsets; large_utf8: int64 offsets).
// The buffers must stay valid during the call.
struct VinInput {
    std::int64_t length = 0;
    std::int64_t offset = 0;                 // of the array into its buffers
    const std::uint8_t* validity = nullptr;  // may be null: no nulls
    const void* offsets = nullptr;
    bool large = true;
    const char* data = nullptr;
};

// A null input is a row with error_code "invalid_vin", error_text "VIN is null".
// `threads` workers (at least 1, at most one per 1024 rows) each decode a contiguous slice into
// a page: the pages, in input order.
// `interrupted` (may be empty) is called on the calling thread about every 50 ms while the batch
// runs (the caller decodes the first slice, then waits for the others); when it returns true every
// worker stops within 1024 rows, and the call throws Interrupted (client/errors.h) once they have.
std::vector<std::shared_ptr<Page>> decode_vin_batch(const vin::Offline& decoder, const VinInput& input, int threads,
                                                    int current_year,
                                                    const std::function<bool()>& interrupted = {});

}  // namespace vehicledata::client
