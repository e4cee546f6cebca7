// Batch VIN decoding into pages: see vehicledata/client/vin_batch.h.
#include "vehicledata/client/vin_batch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "vehicledata/client/errors.h"

namespace vehicledata::client {

namespace {

enum Col { kVin, kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel, kErrorCode, kErrorText, kTrimId, kCols };

// A column's usual bytes per row (the VIN 17, an error text about 60): reserved up front.
constexpr std::size_t kBytesPerRow[kCols] = {17, 0, 10, 10, 6, 10, 14, 24, 16, 10, 2, 64, 0};

Page empty_batch_page() {
    Page p;
    p.record = "vin_batch";
    const auto& names = vin_batch_columns();
    for (std::size_t i = 0; i < names.size(); ++i) {
        Column c;
        c.name = names[i];
        const bool number = i == kYear || i == kTrimId;
        c.type = number ? schema::Type::Int64 : schema::Type::String;
        c.kind = number ? ColumnKind::Int64 : ColumnKind::String;
        p.columns.push_back(std::move(c));
    }
    return p;
}

// Empties `p` (its buffers keep their capacity) and reserves room for `rows` rows.
void reset_batch_page(Page& p, std::size_t rows) {
    p.rows = 0;
    for (std::size_t i = 0; i < p.columns.size(); ++i) {
        Column& c = p.columns[i];
        c.null_count = 0;
        c.valid.clear();
        c.ints.clear();
        c.offsets.assign(1, 0);  // as a new Column
        c.bytes.clear();
        reserve_column(c, rows, rows * kBytesPerRow[i]);
    }
}

std::size_t reserved_bytes(const Page& p) {
    std::size_t n = 0;
    for (const Column& c : p.columns)
        n += c.valid.capacity() + c.ints.capacity() * sizeof(std::int64_t) +
             c.offsets.capacity() * sizeof(std::int64_t) + c.bytes.capacity();
    return n;
}

// Batch pages whose buffers are reused: when the last Arrow array over a page is released, the
// page comes back here with its buffers' capacity instead of going back to malloc. A batch's
// buffers are tens of MB; fresh from the kernel, each of their pages is faulted in (zeroed) on
// first write, and glibc maps blocks over its mmap threshold fresh on every call (always when
// MALLOC_TRIM_THRESHOLD_ is set, as Dask's nanny sets it for its workers: about a third of a Dask
// worker's decoding time went to the kernel). Bounded: at most kMaxPages pages and kMaxBytes of
// their reservations together (about 1,700,000 rows: a Dask partition of a million VINs, a
// Parquet row group of as many, still reuses its page; a page that does not fit goes back to malloc),
// so that what a process keeps between calls stays small next to what it decodes.
class PagePool : public std::enable_shared_from_this<PagePool> {
public:
    static constexpr std::size_t kMaxPages = 4;
    static constexpr std::size_t kMaxBytes = std::size_t{512} << 20;

    static PagePool& instance() {
        static const std::shared_ptr<PagePool> pool(new PagePool());  // kept by the pages' deleters too
        return *pool;
    }

    // An empty page with room for `rows` rows: a pooled one (the one with the most room) or a new one.
    std::shared_ptr<Page> take(std::size_t rows) {
        std::unique_ptr<Page> page;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!free_.empty()) {
                auto most = std::max_element(free_.begin(), free_.end(), [](const auto& a, const auto& b) {
                    return a.bytes < b.bytes;
                });
                page = std::move(most->page);
                bytes_ -= most->bytes;
                free_.erase(most);
            }
        }
        if (!page) page = std::make_unique<Page>(empty_batch_page());
        reset_batch_page(*page, rows);
        std::shared_ptr<PagePool> self = shared_from_this();
        return std::shared_ptr<Page>(page.release(), [self](Page* p) { self->give(p); });
    }

private:
    PagePool() { free_.reserve(kMaxPages); }  // give() does not allocate

    void give(Page* raw) noexcept {
        Free kept{std::unique_ptr<Page>(raw), reserved_bytes(*raw)};
        std::lock_guard<std::mutex> lock(mutex_);
        if (free_.size() < kMaxPages && bytes_ + kept.bytes <= kMaxBytes) {
            bytes_ += kept.bytes;
            free_.push_back(std::move(kept));
        }
    }  // a page not kept is freed here, after the lock

    struct Free {
        std::unique_ptr<Page> page;
        std::size_t bytes = 0;  // reserved_bytes(*page)
    };
    std::mutex mutex_;
    std::vector<Free> free_;
    std::size_t bytes_ = 0;
};

// While a slice is written, a text column's `bytes` is longer than its values (zero-filled to
// about what its rows need up front, open_text) and its last offset is how much of it they fill:
// a value is copied in place, not appended with a std::string call per value; close_text trims
// `bytes` to its values.
void open_text(Column& c, std::size_t bytes) {
    c.bytes.resize(std::max<std::size_t>(bytes, 64));
}

void close_text(Column& c) { c.bytes.resize(static_cast<std::size_t>(c.offsets.back())); }

// Where `n` more bytes of `c`'s values go (`bytes` grown when they do not fit).
char* text_room(Column& c, std::size_t n) {
    const auto at = static_cast<std::size_t>(c.offsets.back());
    if (at + n > c.bytes.size()) c.bytes.resize(std::max(c.bytes.size() * 2, at + n));
    return c.bytes.data() + at;
}

// Ends `c`'s value of `n` bytes (written at text_room).
void end_text(Column& c, std::size_t n) {
    const std::int64_t end = c.offsets.back() + static_cast<std::int64_t>(n);
    c.valid.push_back(1);
    c.offsets.push_back(end);
}

void put_null(Column& c) {
    c.valid.push_back(0);
    ++c.null_count;
    if (c.kind == ColumnKind::Int64) {
        c.ints.push_back(0);
    } else {
        const std::int64_t end = c.offsets.back();
        c.offsets.push_back(end);
    }
}

void put_text(Column& c, std::string_view v) {
    if (!v.empty()) std::memcpy(text_room(c, v.size()), v.data(), v.size());
    end_text(c, v.size());
}

void put_text(Column& c, const std::string_view* v) {
    if (v) put_text(c, *v);
    else put_null(c);
}

void put_int(Column& c, std::int64_t v) {
    c.valid.push_back(1);
    c.ints.push_back(v);
}


// "3.6L 6cyl LFX", the parts decoded, written straight into the column.
void put_engine(Column& c, const std::string_view* displacement, const std::string_view* cylinders,
                const std::string_view* model) {
    const std::size_t most = (displacement ? displacement->size() + 1 : 0) + (cylinders ? cylinders->size() + 4 : 0) +
                             (model ? model->size() + 1 : 0);
    char* const start = text_room(c, most);
    char* out = start;
    auto put = [&](std::string_view v) {
        std::memcpy(out, v.data(), v.size());
        out += v.size();
    };
    if (displacement) { put(*displacement); *out++ = 'L'; }
    if (cylinders) {
        if (out != start) *out++ = ' ';
        put(*cylinders);
        put("cyl");
    }
    if (model) {
        if (out != start) *out++ = ' ';
        put(*model);
    }
    if (out == start) put_null(c);
    else end_text(c, static_cast<std::size_t>(out - start));
}

// The text columns a decoded row's key settles: kMake ... kErrorText.
constexpr int kFirstText = kMake, kTextCols = kErrorText - kMake + 1;
static_assert(kTextCols == 10 && kTrimId == kErrorText + 1);

// The rows a worker has written, by vin::Decoder::answer_key: a VIN whose key is here gets that
// row's values (its own `vin`; a 404 row its message with its own VIN) without a decode.  Only
// rows of decodes whose vPIC error codes hold none of 2-5 are kept (answer_key's terms; the other
// elements that differ between VINs of one key are no column).  Batches repeat vehicles: the serial number (positions 12-17) is all that
// differs between most VINs of a make, model and year.  Not thread-safe: one per worker (kept
// between batches in the Offline's pool: WorkerMemo).
struct RowMemo {
    using Key = std::array<char, 17>;
    struct Hash {
        std::size_t operator()(const Key& k) const {
            std::uint64_t a, b;
            std::memcpy(&a, k.data(), 8);
            std::memcpy(&b, k.data() + 8, 8);
            std::uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b + static_cast<unsigned char>(k[16]) * 0xC2B2AE3D27D4EB4Full);
            h ^= h >> 29;
            h *= 0xBF58476D1CE4E5B9ull;
            return static_cast<std::size_t>(h ^ (h >> 32));
        }
    };
    // A row's text is in `text` (one buffer for all rows: no allocation per row), from `at`.
    struct Row {
        std::int64_t year = 0, trim_id = 0;
        std::uint32_t at = 0;    // where its text starts in RowMemo::text
        bool has_trim = false;
        bool not_found = false;  // the API's 404: its text [at, at + ends[1]) is its message after "VIN <vin>"
        std::uint16_t present = 0;                      // bit k: text column kFirstText + k is not null
        std::array<std::uint32_t, kTextCols + 1> ends{};  // its value: text[at + ends[k], at + ends[k + 1])
    };
    std::unordered_map<Key, Row, Hash> rows;
    std::unique_ptr<char[]> text;  // the rows' texts end to end: [0, text_size)
    std::size_t text_size = 0, text_cap = 0;
    static constexpr std::size_t kMaxEntries = 1u << 16;  // then it starts over
    static constexpr std::size_t kMaxText = std::size_t{1} << 31;  // (a Row's offsets are 32 bits) then too
    RowMemo() { rows.reserve(4096); }
    void clear() {
        rows.clear();
        text_size = 0;  // the buffer's capacity is kept
    }
    // Room for `n` more bytes at the end of `text` (grown by doubling; not zero-filled, unlike a
    // string's resize): where they start.
    char* extend(std::size_t n) {
        if (text_size + n > text_cap) {
            const std::size_t cap = std::max({text_cap * 2, text_size + n, std::size_t{1} << 16});
            std::unique_ptr<char[]> bigger(new char[cap]);
            if (text_size) std::memcpy(bigger.get(), text.get(), text_size);
            text = std::move(bigger);
            text_cap = cap;
        }
        char* const at = text.get() + text_size;
        text_size += n;
        return at;
    }
    std::string_view value(const Row& row, int k) const {
        const auto i = static_cast<std::size_t>(k);
        return std::string_view(text.get() + row.at + row.ends[i], row.ends[i + 1] - row.ends[i]);
    }
};

// Keeps the row just written (the page's last) of a decoded VIN (ok or not_found) under its key;
// `codes`: its decode's vPIC error codes (a.result's kErrorCode, nullptr when none).
void remember(const Page& p, const vin::RowAnswer& a, const std::string_view* codes, RowMemo& memo) {
    const std::size_t last = p.columns[kVin].size() - 1;
    if (codes) {
        const std::string_view list = *codes;
        for (std::size_t i = 0; i < list.size();) {
            std::size_t j = list.find(',', i);
            if (j == std::string_view::npos) j = list.size();
            if (j - i == 1 && list[i] >= '2' && list[i] <= '5') return;  // VIN corrected...: not by the key alone
            i = j + 1;
        }
    }
    if (memo.rows.size() >= RowMemo::kMaxEntries || memo.text_size >= RowMemo::kMaxText) memo.clear();
    RowMemo::Key key;
    std::memcpy(key.data(), a.key, key.size());
    RowMemo::Row row;
    if (a.kind == vin::Answer::Kind::not_found) {
        // not_found_message: "VIN <vin>: ..." (the rest from the WMI, year and codes: the key's).
        const std::string_view message = a.message;
        if (message.substr(0, 4) != "VIN " || message.substr(4, a.vin.size()) != a.vin) return;
        const std::string_view rest = message.substr(4 + a.vin.size());
        row.not_found = true;
        row.at = static_cast<std::uint32_t>(memo.text_size);
        row.ends[1] = static_cast<std::uint32_t>(rest.size());
        if (!rest.empty()) std::memcpy(memo.extend(rest.size()), rest.data(), rest.size());
        memo.rows.emplace(key, row);
        return;
    }
    row.year = a.result.year;
    row.has_trim = a.has_trim;
    row.trim_id = a.trim_id;
    // The text columns' values end to end, sized once and copied in (no append call per value).
    std::string_view values[kTextCols];
    std::size_t bytes = 0;
    for (int k = 0; k < kTextCols; ++k) {
        const Column& c = p.columns[static_cast<std::size_t>(kFirstText + k)];
        if (c.valid[last]) {
            row.present = static_cast<std::uint16_t>(row.present | (1u << k));
            values[k] = c.str(last);
            bytes += values[k].size();
        }
        row.ends[static_cast<std::size_t>(k) + 1] = static_cast<std::uint32_t>(bytes);
    }
    row.at = static_cast<std::uint32_t>(memo.text_size);
    char* const text = memo.extend(bytes);
    for (int k = 0; k < kTextCols; ++k)
        if (!values[k].empty())
            std::memcpy(text + row.ends[static_cast<std::size_t>(k)], values[k].data(), values[k].size());
    memo.rows.emplace(key, row);
}

// The row of a VIN whose key `memo` holds (put_row's decoded row, byte for byte).
void put_remembered(Page& p, const vin::RowAnswer& a, const RowMemo& memo, const RowMemo::Row& row) {
    auto& c = p.columns;
    put_text(c[kVin], a.vin);
    if (row.not_found) {
        for (int k : {kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel}) put_null(c[k]);
        put_text(c[kErrorCode], "not_found");
        Column& text = c[kErrorText];
        const std::string_view rest = memo.value(row, 0);
        const std::size_t n = 4 + a.vin.size() + rest.size();
        char* out = text_room(text, n);
        std::memcpy(out, "VIN ", 4);
        std::memcpy(out + 4, a.vin.data(), a.vin.size());
        if (!rest.empty()) std::memcpy(out + 4 + a.vin.size(), rest.data(), rest.size());
        end_text(text, n);
        put_null(c[kTrimId]);
        return;
    }
    put_int(c[kYear], row.year);
    for (int k = 0; k < kTextCols; ++k) {
        Column& col = c[static_cast<std::size_t>(kFirstText + k)];
        if ((row.present >> k) & 1u)
            put_text(col, memo.value(row, k));
        else
            put_null(col);
    }
    if (row.has_trim) put_int(c[kTrimId], row.trim_id);
    else put_null(c[kTrimId]);
}

void put_row(Page& p, std::string_view raw, bool is_null, const vin::Offline& decoder, int current_year,
             vin::RankMemo& memo, RowMemo& rows, vin::RowAnswer& a) {
    auto& c = p.columns;
    ++p.rows;
    if (is_null) {
        put_null(c[kVin]);
        for (int k : {kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel}) put_null(c[k]);
        put_text(c[kErrorCode], "invalid_vin");
        put_text(c[kErrorText], "VIN is null");
        put_null(c[kTrimId]);
        return;
    }
    if (decoder.begin_row(raw, a)) {
        RowMemo::Key key;
        std::memcpy(key.data(), a.key, key.size());
        auto hit = rows.rows.find(key);
        if (hit != rows.rows.end()) {
            put_remembered(p, a, rows, hit->second);
            return;
        }
        decoder.finish_row(current_year, memo, a);
    }
    if (a.kind != vin::Answer::Kind::ok) {
        put_text(c[kVin], a.kind == vin::Answer::Kind::invalid ? raw : std::string_view(a.vin));
        for (int k : {kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel}) put_null(c[k]);
        put_text(c[kErrorCode], a.kind == vin::Answer::Kind::invalid ? "invalid_vin" : "not_found");
        put_text(c[kErrorText], a.message);
        put_null(c[kTrimId]);
        if (a.kind == vin::Answer::Kind::not_found) remember(p, a, a.result.get(vin::kErrorCode), rows);
        return;
    }
    const vin::Result& r = a.result;
    using V = vin::RowAnswer;
    const std::string_view* const* v = a.values;  // finish_row's one pass over the decode's values
    put_text(c[kVin], a.vin);
    put_int(c[kYear], r.year);
    put_text(c[kMake], a.make);
    put_text(c[kModel], v[V::eModel]);
    put_text(c[kTrim], v[V::eTrim]);
    put_text(c[kSeries], v[V::eSeries]);
    put_text(c[kBody], v[V::eBody]);
    put_text(c[kDrive], v[V::eDrive]);
    put_engine(c[kEngine], v[V::eDisplacement], v[V::eCylinders], v[V::eEngineModel]);
    put_text(c[kFuel], v[V::eFuel]);
    put_text(c[kErrorCode], v[V::eErrorCode]);
    put_text(c[kErrorText], v[V::eErrorText]);
    if (a.has_trim) put_int(c[kTrimId], a.trim_id);
    else put_null(c[kTrimId]);
    remember(p, a, v[V::eErrorCode], rows);
}

// A worker's memos, kept in the Offline's pool between batches (its rows are answers for one
// current_year: cleared when the year differs).
struct WorkerMemo : vin::BatchMemo {
    vin::RankMemo rank;
    RowMemo rows;
    int current_year = 0;
};

std::unique_ptr<WorkerMemo> take_memo(const vin::Offline& decoder, int current_year) {
    std::unique_ptr<vin::BatchMemo> pooled = decoder.take_memo();
    std::unique_ptr<WorkerMemo> memo;
    if (auto* w = dynamic_cast<WorkerMemo*>(pooled.get())) {
        pooled.release();
        memo.reset(w);
    } else {
        memo = std::make_unique<WorkerMemo>();
    }
    if (memo->current_year != current_year) {
        memo->rows.clear();
        memo->current_year = current_year;
    }
    return memo;
}

// A batch's stop: set when the caller's interrupt check asks to stop; the workers read it every
// kStopRows rows, and the caller runs the check every kCheckEvery while its own slice runs.
struct Stop {
    static constexpr std::int64_t kStopRows = 1024;
    static constexpr std::chrono::milliseconds kCheckEvery{50};
    std::atomic<bool> stop{false};
    const std::function<bool()>* interrupted = nullptr;  // none: never stops
    std::chrono::steady_clock::time_point next_check = std::chrono::steady_clock::now() + kCheckEvery;

    // Whether to stop a slice (the caller's, `caller`: the check run when its time has come).
    bool now(bool caller) {
        if (stop.load(std::memory_order_relaxed)) return true;
        if (!caller || !interrupted || !*interrupted) return false;
        const auto t = std::chrono::steady_clock::now();
        if (t < next_check) return false;
        next_check = t + kCheckEvery;
        if ((*interrupted)()) stop.store(true, std::memory_order_relaxed);
        return stop.load(std::memory_order_relaxed);
    }
};

// Decodes rows [from, to) into `p`; false when `stop` ended it early (the page then holds a part).
bool decode_slice(Page& p, const VinInput& in, std::int64_t from, std::int64_t to, const vin::Offline& decoder,
                  int current_year, Stop& stop, bool caller) {
    std::unique_ptr<WorkerMemo> worker = take_memo(decoder, current_year);
    vin::RankMemo& memo = worker->rank;
    RowMemo& rows = worker->rows;
    vin::RowAnswer answer;
    for (std::size_t k = 0; k < p.columns.size(); ++k)
        if (p.columns[k].kind == ColumnKind::String)
            open_text(p.columns[k], static_cast<std::size_t>(to - from) * kBytesPerRow[k]);
    bool stopped = false;
    for (std::int64_t i = from; i < to; ++i) {
        if (((i - from) & (Stop::kStopRows - 1)) == Stop::kStopRows - 1 && stop.now(caller)) {
            stopped = true;
            break;
        }
        const std::int64_t j = in.offset + i;
        const bool is_null = in.validity && !((in.validity[j >> 3] >> (j & 7)) & 1);
        std::int64_t begin = 0, end = 0;
        if (in.large) {
            begin = static_cast<const std::int64_t*>(in.offsets)[j];
            end = static_cast<const std::int64_t*>(in.offsets)[j + 1];
        } else {
            begin = static_cast<const std::int32_t*>(in.offsets)[j];
            end = static_cast<const std::int32_t*>(in.offsets)[j + 1];
        }
        put_row(p, std::string_view(in.data + begin, static_cast<std::size_t>(end - begin)), is_null, decoder,
                current_year, memo, rows, answer);
    }
    for (Column& c : p.columns)
        if (c.kind == ColumnKind::String) close_text(c);
    decoder.give_memo(std::move(worker));  // not after an exception: that memo is dropped
    return !stopped;
}

}  // namespace

const std::vector<std::string>& vin_batch_columns() {
    static const std::vector<std::string> names = {"vin",  "year",   "make", "model",      "trim",       "series", "body",
                                                    "drive", "engine", "fuel", "error_code", "error_text", "trim_id"};
    return names;
}

std::vector<std::shared_ptr<Page>> decode_vin_batch(const vin::Offline& decoder, const VinInput& input, int threads,
                                                    int current_year, const std::function<bool()>& interrupted) {
    const std::int64_t n = input.length;
    const std::int64_t most = std::max<std::int64_t>(1, n / 1024);
    const std::int64_t workers = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, most));
    std::vector<std::shared_ptr<Page>> pages(static_cast<std::size_t>(workers));
    std::vector<std::exception_ptr> errors(pages.size());
    Stop stop;
    if (interrupted) stop.interrupted = &interrupted;
    std::mutex mutex;
    std::condition_variable done_cv;
    std::size_t running = pages.size() - 1;  // the other workers' slices, guarded by mutex
    auto run = [&](std::size_t w) {
        try {
            const std::int64_t from = n * static_cast<std::int64_t>(w) / workers;
            const std::int64_t to = n * static_cast<std::int64_t>(w + 1) / workers;
            std::shared_ptr<Page> page = PagePool::instance().take(static_cast<std::size_t>(to - from));
            if (decode_slice(*page, input, from, to, decoder, current_year, stop, w == 0)) pages[w] = std::move(page);
        } catch (...) {
            errors[w] = std::current_exception();
            stop.stop.store(true, std::memory_order_relaxed);  // the others need not finish
        }
        if (w != 0) {
            std::lock_guard<std::mutex> lock(mutex);
            if (--running == 0) done_cv.notify_one();
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < pages.size(); ++w) pool.emplace_back(run, w);
    run(0);
    {
        // The others' slices: waited for with the interrupt check every kCheckEvery.
        std::unique_lock<std::mutex> lock(mutex);
        while (running != 0) {
            if (done_cv.wait_for(lock, Stop::kCheckEvery, [&] { return running == 0; })) break;
            if (stop.stop.load(std::memory_order_relaxed)) continue;
            lock.unlock();
            if (stop.interrupted && (*stop.interrupted)()) stop.stop.store(true, std::memory_order_relaxed);
            lock.lock();
        }
    }
    for (auto& t : pool) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    if (stop.stop.load(std::memory_order_relaxed)) throw Interrupted();
    return pages;
}

}  // namespace vehicledata::client
