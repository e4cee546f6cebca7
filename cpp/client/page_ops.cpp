// Page concatenation: see vehicledata/client/page.h.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "vehicledata/client/page.h"

namespace vehicledata::client {

namespace {

template <class T>
void take(std::vector<T>& dst, std::vector<T>& src) {
    dst.insert(dst.end(), src.begin(), src.end());
    std::vector<T>().swap(src);
}

bool stringy(ColumnKind k) { return k == ColumnKind::String || k == ColumnKind::Json; }

Page header_like(const Page& src) {
    Page out;
    out.record = src.record;
    out.url = src.url;
    out.collection = src.collection;
    out.synthetic = src.synthetic;
    return out;
}

Column column_like(const Column& c) {
    Column n;
    n.name = c.name;
    n.type = c.type;
    n.kind = c.kind;
    return n;
}

std::size_t text_reserve(const Column& sample, std::size_t rows) {
    // The sample's bytes per row, a quarter more, plus 8: later pages of a crawl may hold longer
    // text (or text where the first had nulls).  Capacity never touched costs address space only.
    const std::size_t per_row = sample.size() ? sample.bytes.size() * 5 / 4 / sample.size() + 8 : 16;
    return rows * per_row;
}

}  // namespace

// Rows (and, for text, bytes) reserved once.  A std::string that outgrows its capacity copies
// itself whole into a new buffer, old and new resident at once: for a merged page that is the
// largest column twice over, so its text is reserved with room to spare rather than regrown.
void reserve_column(Column& n, std::size_t rows, std::size_t bytes) {
    n.valid.reserve(rows);
    if (n.kind == ColumnKind::Float64) {
        n.floats.reserve(rows);
    } else if (stringy(n.kind)) {
        n.offsets.reserve(rows + 1);
        n.bytes.reserve(bytes);
    } else {
        n.ints.reserve(rows);
        if (n.kind == ColumnKind::Timestamp) n.utc_offset_minutes.reserve(rows);
    }
}

std::vector<std::string> synthetic_fields(std::string_view header) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= header.size()) {
        std::size_t end = header.find(',', start);
        if (end == std::string_view::npos) end = header.size();
        std::string_view item = header.substr(start, end - start);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (!item.empty()) out.emplace_back(item);
        start = end + 1;
    }
    return out;
}

void merge_synthetic(std::vector<std::string>& dst, const std::vector<std::string>& src) {
    for (const auto& f : src)
        if (std::find(dst.begin(), dst.end(), f) == dst.end()) dst.push_back(f);
}

Page empty_like(const Page& src, std::size_t reserve_rows, std::size_t reserve_bytes_per_row) {
    Page out = header_like(src);
    for (const auto& c : src.columns) {
        Column n = column_like(c);
        if (reserve_rows)
            reserve_column(n, reserve_rows,
                           reserve_bytes_per_row ? reserve_rows * reserve_bytes_per_row : text_reserve(c, reserve_rows));
        out.columns.push_back(std::move(n));
    }
    return out;
}

void append_page(Page& dst, const Page& src) {
    if (src.record != dst.record || src.columns.size() != dst.columns.size())
        throw std::invalid_argument("cannot append a page of record '" + src.record + "' to one of '" + dst.record + "'");
    for (std::size_t k = 0; k < dst.columns.size(); ++k) {
        Column& d = dst.columns[k];
        const Column& s = src.columns[k];
        if (d.name != s.name || d.kind != s.kind) throw std::invalid_argument("pages have different columns");
        if (stringy(d.kind)) {
            const std::int64_t base = static_cast<std::int64_t>(d.bytes.size());
            for (std::size_t i = 1; i < s.offsets.size(); ++i) d.offsets.push_back(base + s.offsets[i]);
            d.bytes.append(s.bytes);
        }
        d.ints.insert(d.ints.end(), s.ints.begin(), s.ints.end());
        d.floats.insert(d.floats.end(), s.floats.begin(), s.floats.end());
        d.utc_offset_minutes.insert(d.utc_offset_minutes.end(), s.utc_offset_minutes.begin(), s.utc_offset_minutes.end());
        d.valid.insert(d.valid.end(), s.valid.begin(), s.valid.end());
        d.null_count += s.null_count;
    }
    merge_synthetic(dst.synthetic, src.synthetic);
    dst.rows += src.rows;
    dst.body_bytes += src.body_bytes;
}

void append_page(Page& dst, Page&& src) {
    append_page(dst, static_cast<const Page&>(src));
    for (Column& s : src.columns) {
        if (stringy(s.kind)) {
            std::string().swap(s.bytes);
            std::vector<std::int64_t>{0}.swap(s.offsets);
        }
        std::vector<std::int64_t>().swap(s.ints);
        std::vector<double>().swap(s.floats);
        std::vector<std::int16_t>().swap(s.utc_offset_minutes);
        std::vector<std::uint8_t>().swap(s.valid);
        s.null_count = 0;
    }
    src.rows = 0;
}

Page concat_pages(const std::vector<Page*>& pages) {
    if (pages.empty()) return Page{};
    // Every source is at hand: rows and text bytes reserved exactly (capacity == size).
    std::size_t rows = 0;
    for (auto* p : pages) rows += p->rows;
    const Page& shape = *pages[0];
    Page out = header_like(shape);
    for (std::size_t k = 0; k < shape.columns.size(); ++k) {
        Column n = column_like(shape.columns[k]);
        std::size_t bytes = 0;
        for (auto* p : pages)
            if (k < p->columns.size()) bytes += p->columns[k].bytes.size();
        reserve_column(n, rows, bytes);
        out.columns.push_back(std::move(n));
    }
    for (auto* p : pages) append_page(out, std::move(*p));
    return out;
}

namespace {

// `src` at `rows` (or every row) into the empty column `out`: the result as a row by row copy
// would give it (a null slot holds 0, NaN for a float missing from its source, no text), made one
// kind at a time.  Every row of a column whose null slots already hold that (the decoder's) is
// its buffers copied whole.
// True when every null slot of `c` holds what a gathered null slot holds (0, no text; a float's
// slot is copied either way): then a copy of its buffers is its row by row gather.
bool canonical_nulls(const Column& c) {
    if (c.null_count == 0 || c.kind == ColumnKind::Float64) return true;
    const std::size_t n = c.valid.size();
    if (stringy(c.kind)) {
        for (std::size_t i = 0; i < n; ++i)
            if (!c.valid[i] && c.offsets[i + 1] != c.offsets[i]) return false;
        return true;
    }
    const bool offsets = c.kind == ColumnKind::Timestamp;
    for (std::size_t i = 0; i < n; ++i)
        if (!c.valid[i] && (c.ints[i] != 0 || (offsets && c.utc_offset_minutes[i] != 0))) return false;
    return true;
}

void gather_column(const Column& src, const ColumnSource& s, std::size_t rows, Column& out) {
    if (s.all_rows && canonical_nulls(src)) {
        out.ints = src.ints;
        out.floats = src.floats;
        out.offsets = src.offsets;
        out.bytes = src.bytes;
        out.utc_offset_minutes = src.utc_offset_minutes;
        out.valid = src.valid;
        out.null_count = src.null_count;
        return;
    }
    auto row = [&](std::size_t i) { return s.all_rows ? static_cast<std::int64_t>(i) : s.rows[i]; };
    out.valid.resize(rows);
    std::size_t nulls = 0;
    for (std::size_t i = 0; i < rows; ++i) {
        const std::int64_t r = row(i);
        const std::uint8_t present = r >= 0 && src.valid[static_cast<std::size_t>(r)] != 0 ? 1 : 0;
        out.valid[i] = present;
        nulls += present ? 0 : 1;
    }
    out.null_count = nulls;
    switch (src.kind) {
        case ColumnKind::Int64: case ColumnKind::Bool: case ColumnKind::Timestamp: {
            const bool offsets = src.kind == ColumnKind::Timestamp;
            out.ints.resize(rows);
            if (offsets) out.utc_offset_minutes.resize(rows);
            for (std::size_t i = 0; i < rows; ++i) {
                if (!out.valid[i]) continue;  // resize() left the 0 of a null slot
                const auto k = static_cast<std::size_t>(row(i));
                out.ints[i] = src.ints[k];
                if (offsets) out.utc_offset_minutes[i] = src.utc_offset_minutes[k];
            }
            break;
        }
        case ColumnKind::Float64:
            out.floats.resize(rows);
            for (std::size_t i = 0; i < rows; ++i) {
                const std::int64_t r = row(i);
                out.floats[i] = r >= 0 ? src.floats[static_cast<std::size_t>(r)] : std::numeric_limits<double>::quiet_NaN();
            }
            break;
        case ColumnKind::String: case ColumnKind::Json: {
            std::size_t bytes = 0;
            for (std::size_t i = 0; i < rows; ++i)
                if (out.valid[i]) {
                    const auto k = static_cast<std::size_t>(row(i));
                    bytes += static_cast<std::size_t>(src.offsets[k + 1] - src.offsets[k]);
                }
            out.bytes.resize(bytes);
            out.offsets.resize(rows + 1);
            out.offsets[0] = 0;
            char* dst = out.bytes.data();
            std::int64_t at = 0;
            for (std::size_t i = 0; i < rows; ++i) {
                if (out.valid[i]) {
                    const auto k = static_cast<std::size_t>(row(i));
                    const std::int64_t from = src.offsets[k], len = src.offsets[k + 1] - from;
                    std::copy_n(src.bytes.data() + from, len, dst + at);
                    at += len;
                }
                out.offsets[i + 1] = at;
            }
            break;
        }
    }
}

}  // namespace

Page gather_columns(const std::vector<ColumnSource>& sources, std::size_t rows, std::string record) {
    Page out;
    out.record = std::move(record);
    out.rows = rows;
    for (const ColumnSource& s : sources) {
        if (!s.page) throw std::invalid_argument("gather_columns: a source without a page");
        if (s.names.size() != s.as.size()) throw std::invalid_argument("gather_columns: names and as differ in length");
        if (s.all_rows ? s.page->rows != rows : s.rows.size() != rows)
            throw std::invalid_argument("gather_columns: a source of another number of rows");
        for (std::int64_t r : s.rows)
            if (r < -1 || r >= static_cast<std::int64_t>(s.page->rows))
                throw std::invalid_argument("gather_columns: row " + std::to_string(r) + " outside a page of " +
                                            std::to_string(s.page->rows) + " rows");
        if (out.url.empty()) {
            out.url = s.page->url;
            out.collection = s.page->collection;
        }
        for (std::size_t k = 0; k < s.names.size(); ++k) {
            const Column* src = s.page->column(s.names[k]);
            if (!src) throw std::invalid_argument("gather_columns: no column '" + s.names[k] + "' in a page of " + s.page->record);
            Column n = column_like(*src);
            n.name = s.as[k];
            gather_column(*src, s, rows, n);
            out.columns.push_back(std::move(n));
        }
    }
    // One page holding the whole result: its block says so.
    out.collection.count = out.collection.total = static_cast<std::int64_t>(rows);
    out.collection.pages = 1;
    out.collection.next.clear();
    out.collection.prev.clear();
    return out;
}

std::vector<std::int64_t> match_rows(const Column& keys, const Column& lookup) {
    if (keys.kind != ColumnKind::Int64 || lookup.kind != ColumnKind::Int64)
        throw std::invalid_argument("match_rows: join keys '" + keys.name + "' and '" + lookup.name +
                                    "' must both be integer columns");
    // Open addressing, linear probing, at most half full: slot -> row of lookup + 1 (0: empty).
    const std::size_t n = lookup.size();
    std::size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    const std::size_t mask = cap - 1;
    int shift = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift;
    auto slot_of = [&](std::int64_t v) {  // Fibonacci hashing: the high bits of v * 2^64/phi
        return static_cast<std::size_t>((static_cast<std::uint64_t>(v) * 0x9E3779B97F4A7C15ull) >> shift) & mask;
    };
    std::vector<std::int64_t> table(cap, 0);
    for (std::size_t r = 0; r < n; ++r) {
        if (!lookup.valid[r]) continue;
        const std::int64_t v = lookup.ints[r];
        for (std::size_t s = slot_of(v);; s = (s + 1) & mask) {
            if (table[s] == 0) { table[s] = static_cast<std::int64_t>(r) + 1; break; }
            if (lookup.ints[static_cast<std::size_t>(table[s] - 1)] == v) break;  // the first row stays
        }
    }
    std::vector<std::int64_t> out(keys.size(), -1);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!keys.valid[i]) continue;
        const std::int64_t v = keys.ints[i];
        for (std::size_t s = slot_of(v); table[s] != 0; s = (s + 1) & mask)
            if (lookup.ints[static_cast<std::size_t>(table[s] - 1)] == v) { out[i] = table[s] - 1; break; }
    }
    return out;
}

Page join_columns(const Page& left, const std::string& left_key, const std::vector<std::string>& names,
                  const std::vector<std::string>& as, const std::vector<JoinSource>& rights, std::string record) {
    const Column* keys = left.column(left_key);
    if (!keys) throw std::invalid_argument("join_columns: no column '" + left_key + "' in a page of " + left.record);
    std::vector<ColumnSource> sources(1 + rights.size());
    sources[0].page = &left;
    sources[0].all_rows = true;
    sources[0].names = names;
    sources[0].as = as;
    for (std::size_t k = 0; k < rights.size(); ++k) {
        const JoinSource& r = rights[k];
        if (!r.page) throw std::invalid_argument("join_columns: a right side without a page");
        const Column* lookup = r.page->column(r.key);
        if (!lookup) throw std::invalid_argument("join_columns: no column '" + r.key + "' in a page of " + r.page->record);
        ColumnSource& s = sources[k + 1];
        s.page = r.page;
        s.rows = match_rows(*keys, *lookup);
        // Parts in the trims' order, one each (the usual case): every row in order, copied whole.
        bool identity = r.page->rows == left.rows;
        for (std::size_t i = 0; identity && i < s.rows.size(); ++i) identity = s.rows[i] == static_cast<std::int64_t>(i);
        if (identity) {
            s.all_rows = true;
            s.rows.clear();
        }
        s.names = r.names;
        s.as = r.as;
    }
    return gather_columns(sources, left.rows, std::move(record));
}

}  // namespace vehicledata::client
