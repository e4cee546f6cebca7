// Decoded pages -> the Arrow C Data Interface (docs/architecture.md: decoder -> Arrow -> pandas).
//
// The three C structs below are written from the public specification of the
// Arrow C Data Interface and C Stream Interface (ABI-stable; the guards let
// another definition of the same structs win).  No Arrow library is used.
//
// A page becomes a struct array (one record batch): one child per column,
//   int, int64      -> int64 ("l")          decimal, float -> float64 ("g")
//   bool            -> bool ("b", bit-packed)
//   string          -> large_utf8 ("U")     nested -> large_utf8 (the JSON text)
//   date            -> date32 ("tdD", days since the epoch; parsed from YYYY-MM-DD)
//   timestamp       -> timestamp[us, UTC] ("tsu:UTC")
// every child nullable with a validity bitmap built here (none when it has no
// nulls).  Values, offsets and string bytes are not copied: each exported
// array holds a shared_ptr to the page, which must not be appended to or
// concatenated (concat_pages empties its sources) while an export lives.
// Bitmaps and date32 values are owned by the exported array.  Every
// release callback frees what it owns and marks the struct released.
// Origin labels (Page::synthetic, from the emulator's X-Emulator-Synthetic) go in
// the schema's metadata: the struct (the table's schema) gets
// "vehicledata.synthetic" = the comma-separated fields, a named column
// "vehicledata.origin" = "synthetic", a nested column with named members
// "vehicledata.synthetic" = those members.  The text-only export has none.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "vehicledata/client/page.h"

extern "C" {

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char* format;
    const char* name;
    const char* metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema** children;
    struct ArrowSchema* dictionary;
    void (*release)(struct ArrowSchema*);
    void* private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void** buffers;
    struct ArrowArray** children;
    struct ArrowArray* dictionary;
    void (*release)(struct ArrowArray*);
    void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
    int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
    const char* (*get_last_error)(struct ArrowArrayStream*);
    void (*release)(struct ArrowArrayStream*);
    void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE
}

namespace vehicledata::client {

// The Arrow format string of a column ("l", "g", "b", "U", "tdD", "tsu:UTC").
const char* arrow_format(const Column& column);

// Fill `out` with the struct schema of the page's columns (names, formats, nullable).
void export_schema(const Page& page, ArrowSchema* out);

// Fill `out` with the page as a struct array.  Throws std::invalid_argument
// when a date column holds text that is not YYYY-MM-DD (nothing is filled then).
void export_array(std::shared_ptr<const Page> page, ArrowArray* out);

// The text columns (string and nested: large_utf8; date: date32), the ones pandas
// takes from Arrow (vehicledata/frames.py): a struct of those columns only, in
// page order, as export_schema / export_array give for all of them.
bool is_text(const Column& column);
void export_text_schema(const Page& page, ArrowSchema* out);
void export_text_array(std::shared_ptr<const Page> page, ArrowArray* out);

// The next page of a stream, or nullptr at the end.  May throw: the stream's
// get_next then returns an error code with the exception's message.
using PageSource = std::function<std::shared_ptr<const Page>()>;

// A stream of record batches with the schema of `schema_page` (its columns;
// its rows are not streamed), one batch per page `next()` gives.  Pages whose
// columns differ from the schema page's end the stream with an error.
void export_stream(std::shared_ptr<const Page> schema_page, PageSource next, ArrowArrayStream* out);

// A stream of the given pages, in order.
void export_stream(std::vector<std::shared_ptr<const Page>> pages, std::shared_ptr<const Page> schema_page,
                   ArrowArrayStream* out);

}  // namespace vehicledata::client
