// The offline VIN decoder of the client: the vPIC tables and the catalogue's trims of a built
// dataset (vehicledata.db and the vpic.db its meta names), read once, answering as the
// emulator's /api/vin/{vin} answers (the same decoder, loader and trim ranking: vin.h,
// vin_load.h, vin_trims.h), without the demo data-set's year limits.
//
// Thread safety: an Offline is immutable after construction (but for its pool of batch memos,
// which a mutex guards); decode() may run concurrently from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vehicledata/vin.h"
#include "vehicledata/vin_load.h"
#include "vehicledata/vin_trims.h"

namespace vehicledata::vin {

// One VIN's answer, as /api/vin/{vin} gives it.
struct Answer {
    enum class Kind { ok, invalid, not_found };  // 200, 400, 404
    Kind kind = Kind::ok;
    std::string vin;          // normalized
    std::string message;      // invalid, not_found: the API's error message
    Result result;            // the decode (ok; not_found once decoded)
    std::string make;         // ok: the make as the catalogue spells it, else vPIC's
    std::vector<std::pair<int, std::int64_t>> trims;  // ok: (score, trim id), best first
};

// The trim rankings one caller has computed, by catalogue list and the elements the ranking reads
// (rank_trims is a function of those): a batch worker's memo.  Not thread-safe: one per thread.
struct RankMemo {
    // A key's bytes and their hash, computed once when the key is written (Offline::ranked): the
    // map reads it, on lookups and rehashes alike, instead of hashing the bytes again.
    struct Key {
        std::string bytes;
        std::size_t hash = 0;
        bool operator==(const Key& o) const { return hash == o.hash && bytes == o.bytes; }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept { return k.hash; }
    };
    std::unordered_map<Key, std::vector<std::pair<int, std::int64_t>>, KeyHash> ranked;
    Key key;  // the key being looked up (its capacity reused)
    static constexpr std::size_t kMaxEntries = 1u << 16;  // then it starts over
};

// What a batch row needs of one VIN's Answer (client/vin_batch.cpp), without copies of it: one
// RowAnswer is filled row after row (Offline::decode_row), its strings keep their capacity.
struct RowAnswer {
    Answer::Kind kind = Answer::Kind::ok;
    std::string vin;              // normalized
    std::string message;          // invalid, not_found: the API's error message
    Result result;                // ok: the decode
    std::string_view make;        // ok: Answer::make (a view into the Offline or into `result`)
    bool has_trim = false;        // ok: the catalogue has trims for the VIN's year/model/make
    std::int64_t trim_id = 0;     // the best of them: the first of Answer::trims
    char key[17] = {};            // begin_row: Decoder::answer_key of a well-formed VIN
    // ok: the values of kElements (nullptr: not decoded), read in one pass over the decode's
    // values (Result::get_many) for both the trim ranking and the batch row.
    static constexpr int kElements[] = {4,           kBodyClass,     kCylinders, kDisplacementL, kDoors, kDriveType,
                                        kEngineModel, kFuelPrimary,  kModel,     kSeries,        kTrim,  kFuelSecondary,
                                        kTrim2,      kSeries2,       kErrorCode, kErrorText};
    enum Value { eCab, eBody, eCylinders, eDisplacement, eDoors, eDrive, eEngineModel, eFuel, eModel, eSeries, eTrim,
                 eFuel2, eTrim2, eSeries2, eErrorCode, eErrorText, kValues };
    const std::string_view* values[kValues] = {};
};
static_assert(sizeof RowAnswer::kElements / sizeof RowAnswer::kElements[0] == RowAnswer::kValues);

// What a batch worker remembers between batches (client/vin_batch.cpp derives its memo from it):
// Offline keeps a pool of them (take_memo / give_memo).
struct BatchMemo {
    virtual ~BatchMemo() = default;
};

class Offline {
public:
    // The most memos the pool keeps (each bounded by its owner): memory stays bounded whatever
    // the number of batches and callers.
    static constexpr std::size_t kPooledMemos = 8;
    // Opens `db_path` read-only, attaches the vPIC tables its meta `vpic_path` names (relative to
    // its folder), checks them (vehicledata/vin_load.h attach_vpic: missing, damaged or incomplete
    // is an error before anything is read) and loads them.  Throws LoadError naming the file and
    // the problem in one line.
    explicit Offline(const std::string& db_path);
    ~Offline();
    Offline(const Offline&) = delete;
    Offline& operator=(const Offline&) = delete;

    // `raw` as sent (trimmed and upper-cased here).  `current_year` as Decoder::decode takes it.
    // `memo`: rankings to reuse and keep (a batch's VINs share models and configurations).
    Answer decode(std::string_view raw, bool all_trims, int current_year, RankMemo* memo = nullptr) const;
    // decode(raw, false, current_year, &memo) as a batch row needs it: `out`'s fields equal the
    // Answer's (kind, vin, message, result, make, the first trim id).
    void decode_row(std::string_view raw, int current_year, RankMemo& memo, RowAnswer& out) const;
    // decode_row in two steps, for a batch that memoizes rows by out.key between them:
    // begin_row normalizes and validates (false: `out` is the invalid row, complete) and sets
    // out.key; finish_row decodes.
    bool begin_row(std::string_view raw, RowAnswer& out) const;
    void finish_row(int current_year, RankMemo& memo, RowAnswer& out) const;

    // A memo from the pool (nullptr when it is empty), for one worker of one batch; give_memo
    // returns it after the batch (dropped when the pool holds kPooledMemos).  Thread-safe:
    // concurrent batches each take their own, so consecutive batches (decode_parquet's, repeated
    // decode_many calls) start with what earlier ones remembered.
    std::unique_ptr<BatchMemo> take_memo() const;
    void give_memo(std::unique_ptr<BatchMemo> memo) const;

    const Decoder& decoder() const { return *decoder_; }
    const std::string& path() const { return path_; }

private:
    // The catalogue's trims of r's year/model/make (nullptr: none) and their key.
    const TrimTexts* trims_of(const Result& r, std::uint64_t& key) const;
    // rank_trims(r, list, all_trims), memoized in `memo` by `key` and the elements it reads.
    // `facts` (may be null: read here): the values of the elements rank_trims reads (vin_trims.cpp's
    // facts, ranked()'s kFacts), in that order.
    const std::vector<std::pair<int, std::int64_t>>& ranked(const Result& r, const TrimTexts& list, std::uint64_t key,
                                                          bool all_trims, RankMemo& memo,
                                                          const std::string_view* const* facts = nullptr) const;
    std::string_view make_of(const Result& r) const;  // Answer::make

    std::string path_;
    std::unique_ptr<const Decoder> decoder_;
    bool has_map_ = false;                                   // the dataset maps vPIC makes/models
    std::unordered_map<std::uint64_t, TrimTexts> trims_;     // by (year, vPIC model, vPIC make)
    std::unordered_map<int, std::string> make_names_;        // vPIC make id -> catalogue name
    mutable std::mutex memo_mutex_;                          // guards memo_pool_
    mutable std::vector<std::unique_ptr<BatchMemo>> memo_pool_;
};

}  // namespace vehicledata::vin
