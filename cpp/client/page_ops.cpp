// Page concatenation: see vehicledata/client/page.h.
#include <stdexcept>

#include "vehicledata/client/page.h"

namespace vehicledata::client {

namespace {

template <class T>
void take(std::vector<T>& dst, std::vector<T>& src) {
    dst.insert(dst.end(), src.begin(), src.end());
    std::vector<T>().swap(src);
}

bool stringy(ColumnKind k) { return k == ColumnKind::String || k == ColumnKind::Json; }

}  // namespace

Page empty_like(const Page& src, std::size_t reserve_rows, std::size_t reserve_bytes_per_row) {
    Page out;
    out.record = src.record;
    out.url = src.url;
    out.collection = src.collection;
    for (const auto& c : src.columns) {
        Column n;
        n.name = c.name;
        n.type = c.type;
        n.kind = c.kind;
        if (reserve_rows) {
            n.valid.reserve(reserve_rows);
            if (n.kind == ColumnKind::Float64) {
                n.floats.reserve(reserve_rows);
            } else if (stringy(n.kind)) {
                n.offsets.reserve(reserve_rows + 1);
                std::size_t per_row = c.size() ? c.bytes.size() / c.size() + 1 : 16;
                n.bytes.reserve(reserve_rows * (reserve_bytes_per_row ? reserve_bytes_per_row : per_row));
            } else {
                n.ints.reserve(reserve_rows);
                if (n.kind == ColumnKind::Timestamp) n.utc_offset_minutes.reserve(reserve_rows);
            }
        }
        out.columns.push_back(std::move(n));
    }
    return out;
}

void append_page(Page& dst, Page&& src) {
    if (src.record != dst.record || src.columns.size() != dst.columns.size())
        throw std::invalid_argument("cannot append a page of record '" + src.record + "' to one of '" + dst.record + "'");
    for (std::size_t k = 0; k < dst.columns.size(); ++k) {
        Column& d = dst.columns[k];
        Column& s = src.columns[k];
        if (d.name != s.name || d.kind != s.kind) throw std::invalid_argument("pages have different columns");
        if (stringy(d.kind)) {
            const std::int64_t base = static_cast<std::int64_t>(d.bytes.size());
            for (std::size_t i = 1; i < s.offsets.size(); ++i) d.offsets.push_back(base + s.offsets[i]);
            d.bytes.append(s.bytes);
            std::string().swap(s.bytes);
            std::vector<std::int64_t>{0}.swap(s.offsets);
        }
        take(d.ints, s.ints);
        take(d.floats, s.floats);
        take(d.utc_offset_minutes, s.utc_offset_minutes);
        take(d.valid, s.valid);
        d.null_count += s.null_count;
        s.null_count = 0;
    }
    dst.rows += src.rows;
    dst.body_bytes += src.body_bytes;
    src.rows = 0;
}

Page concat_pages(const std::vector<Page*>& pages) {
    if (pages.empty()) return Page{};
    std::size_t rows = 0;
    for (auto* p : pages) rows += p->rows;
    Page out = empty_like(*pages[0], rows);
    for (auto* p : pages) append_page(out, std::move(*p));
    return out;
}

}  // namespace vehicledata::client
