// Pages -> Arrow C Data Interface: see vehicledata/client/arrow_export.h.
#include "vehicledata/client/arrow_export.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "vehicledata/format.h"

namespace vehicledata::client {

namespace {

using schema::Type;

// A buffer that is never read: the data pointer of empty buffers (the spec
// wants non-null data buffers; length-0 arrays read nothing from them).
alignas(64) const std::int64_t kEmpty[8] = {};

const void* data_or_empty(const void* p, std::size_t size) { return size ? p : static_cast<const void*>(kEmpty); }

// ---- schema -------------------------------------------------------------------

struct SchemaPrivate {
    std::string name;
    std::string metadata;  // the encoded key/value pairs ("" : none)
    std::vector<ArrowSchema> child_structs;
    std::vector<ArrowSchema*> children;
};

void release_schema(ArrowSchema* s) {
    if (!s || !s->release) return;
    for (std::int64_t i = 0; i < s->n_children; ++i) {
        ArrowSchema* c = s->children[i];
        if (c->release) c->release(c);
    }
    delete static_cast<SchemaPrivate*>(s->private_data);
    s->release = nullptr;
}

void fill_schema(ArrowSchema* out, const char* format, std::string name, std::int64_t flags, SchemaPrivate* priv) {
    priv->name = std::move(name);
    out->format = format;
    out->name = priv->name.c_str();
    out->metadata = priv->metadata.empty() ? nullptr : priv->metadata.data();
    out->flags = flags;
    out->n_children = static_cast<std::int64_t>(priv->children.size());
    out->children = priv->children.empty() ? nullptr : priv->children.data();
    out->dictionary = nullptr;
    out->release = &release_schema;
    out->private_data = priv;
}

// ---- arrays -------------------------------------------------------------------

// What one exported array owns: the page its buffers view, the buffers built
// here, the buffer pointer table and (for the struct) its children.
struct ArrayPrivate {
    std::shared_ptr<const Page> page;
    std::vector<std::uint8_t> validity;
    std::vector<std::uint8_t> bits;     // bool values
    std::vector<std::int32_t> days;     // date32 values
    const void* buffers[3] = {nullptr, nullptr, nullptr};
    std::vector<ArrowArray> child_structs;
    std::vector<ArrowArray*> children;
};

void release_array(ArrowArray* a) {
    if (!a || !a->release) return;
    for (std::int64_t i = 0; i < a->n_children; ++i) {
        ArrowArray* c = a->children[i];
        if (c->release) c->release(c);
    }
    delete static_cast<ArrayPrivate*>(a->private_data);
    a->release = nullptr;
}

std::vector<std::uint8_t> pack_bits(const std::vector<std::uint8_t>& flags) {
    std::vector<std::uint8_t> out((flags.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < flags.size(); ++i)
        out[i >> 3] |= static_cast<std::uint8_t>((flags[i] != 0) << (i & 7));
    return out;
}

std::vector<std::uint8_t> pack_bits(const std::vector<std::int64_t>& values) {
    std::vector<std::uint8_t> out((values.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < values.size(); ++i)
        out[i >> 3] |= static_cast<std::uint8_t>((values[i] != 0) << (i & 7));
    return out;
}

bool digits(std::string_view s, std::size_t from, std::size_t n, unsigned& out) {
    out = 0;
    for (std::size_t i = from; i < from + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        out = out * 10 + static_cast<unsigned>(s[i] - '0');
    }
    return true;
}

// "YYYY-MM-DD" -> days since 1970-01-01 (false if malformed or not a calendar day).
bool parse_date(std::string_view s, std::int32_t& days) {
    unsigned y = 0, m = 0, d = 0;
    if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 0, 4, y) || !digits(s, 5, 2, m) ||
        !digits(s, 8, 2, d) || m < 1 || m > 12 || d < 1)
        return false;
    static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > kDays[m - 1] + (m == 2 && leap ? 1u : 0u)) return false;
    days = static_cast<std::int32_t>(format::days_from_civil(static_cast<int>(y), m, d));
    return true;
}

void fill_column(ArrowArray* out, const Column& c, const std::shared_ptr<const Page>& page) {
    auto priv = std::make_unique<ArrayPrivate>();
    priv->page = page;
    const std::size_t n = c.size();
    if (c.null_count) priv->validity = pack_bits(c.valid);
    priv->buffers[0] = c.null_count ? priv->validity.data() : nullptr;
    std::int64_t n_buffers = 2;
    switch (c.kind) {
        case ColumnKind::Int64: case ColumnKind::Timestamp:
            priv->buffers[1] = data_or_empty(c.ints.data(), n);
            break;
        case ColumnKind::Float64:
            priv->buffers[1] = data_or_empty(c.floats.data(), n);
            break;
        case ColumnKind::Bool:
            priv->bits = pack_bits(c.ints);
            priv->buffers[1] = data_or_empty(priv->bits.data(), priv->bits.size());
            break;
        case ColumnKind::String: case ColumnKind::Json:
            if (c.type == Type::Date) {
                priv->days.assign(n, 0);
                for (std::size_t i = 0; i < n; ++i) {
                    if (c.valid[i] && !parse_date(c.str(i), priv->days[i]))
                        throw std::invalid_argument("column '" + c.name + "', row " + std::to_string(i) +
                                                    ": not a date (YYYY-MM-DD): '" + std::string(c.str(i)) + "'");
                }
                priv->buffers[1] = data_or_empty(priv->days.data(), n);
            } else {
                priv->buffers[1] = c.offsets.data();  // rows + 1 entries, never empty
                priv->buffers[2] = data_or_empty(c.bytes.data(), c.bytes.size());
                n_buffers = 3;
            }
            break;
    }
    out->length = static_cast<std::int64_t>(n);
    out->null_count = static_cast<std::int64_t>(c.null_count);
    out->offset = 0;
    out->n_buffers = n_buffers;
    out->n_children = 0;
    out->buffers = priv->buffers;
    out->children = nullptr;
    out->dictionary = nullptr;
    out->release = &release_array;
    out->private_data = priv.release();
}

bool same_columns(const Page& a, const Page& b) {
    if (a.columns.size() != b.columns.size()) return false;
    for (std::size_t k = 0; k < a.columns.size(); ++k)
        if (a.columns[k].name != b.columns[k].name || a.columns[k].type != b.columns[k].type) return false;
    return true;
}

// ---- stream -------------------------------------------------------------------

struct StreamPrivate {
    std::shared_ptr<const Page> schema_page;
    PageSource next;
    std::string error;
};

int stream_get_schema(ArrowArrayStream* s, ArrowSchema* out) {
    auto* p = static_cast<StreamPrivate*>(s->private_data);
    try {
        export_schema(*p->schema_page, out);
        return 0;
    } catch (const std::exception& e) {
        p->error = e.what();
        return ENOMEM;
    }
}

int stream_get_next(ArrowArrayStream* s, ArrowArray* out) {
    auto* p = static_cast<StreamPrivate*>(s->private_data);
    try {
        std::shared_ptr<const Page> page = p->next ? p->next() : nullptr;
        if (!page) {
            std::memset(out, 0, sizeof(*out));  // released: the end of the stream
            p->next = nullptr;
            return 0;
        }
        if (!same_columns(*page, *p->schema_page))
            throw std::invalid_argument("a page of the stream has other columns than its schema");
        export_array(std::move(page), out);
        return 0;
    } catch (const std::invalid_argument& e) {
        p->error = e.what();
        return EINVAL;
    } catch (const std::exception& e) {
        p->error = e.what();
        return EIO;
    }
}

const char* stream_last_error(ArrowArrayStream* s) {
    auto* p = static_cast<StreamPrivate*>(s->private_data);
    return p->error.empty() ? nullptr : p->error.c_str();
}

void stream_release(ArrowArrayStream* s) {
    if (!s || !s->release) return;
    delete static_cast<StreamPrivate*>(s->private_data);
    s->release = nullptr;
}

}  // namespace

const char* arrow_format(const Column& c) {
    switch (c.kind) {
        case ColumnKind::Int64: return "l";
        case ColumnKind::Float64: return "g";
        case ColumnKind::Bool: return "b";
        case ColumnKind::Timestamp: return "tsu:UTC";
        case ColumnKind::String: case ColumnKind::Json: return c.type == Type::Date ? "tdD" : "U";
    }
    return "U";
}

namespace {

// The page's columns an export holds: all of them, or the text ones only.
std::vector<std::size_t> exported(const Page& page, bool text_only) {
    std::vector<std::size_t> out;
    out.reserve(page.columns.size());
    for (std::size_t i = 0; i < page.columns.size(); ++i)
        if (!text_only || is_text(page.columns[i])) out.push_back(i);
    return out;
}

// Arrow C Data Interface metadata: int32 count, then per pair int32 length + key bytes,
// int32 length + value bytes (native byte order).
void put_int32(std::string& out, std::size_t v) {
    const auto n = static_cast<std::int32_t>(v);
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
}

std::string encode_metadata(const std::vector<std::pair<std::string, std::string>>& pairs) {
    if (pairs.empty()) return {};
    std::string out;
    put_int32(out, pairs.size());
    for (const auto& [k, v] : pairs) {
        put_int32(out, k.size());
        out += k;
        put_int32(out, v.size());
        out += v;
    }
    return out;
}

// The origin labels of one column from the page's synthetic fields: "vehicledata.origin" =
// "synthetic" when the column is named, "vehicledata.synthetic" = its named members (nested).
std::string column_metadata(const Page& page, const Column& c) {
    std::vector<std::pair<std::string, std::string>> pairs;
    std::string members;
    const std::string prefix = c.name + ".";
    for (const auto& f : page.synthetic) {
        if (f == c.name) {
            pairs.emplace_back("vehicledata.origin", "synthetic");
        } else if (f.compare(0, prefix.size(), prefix) == 0) {
            if (!members.empty()) members += ',';
            members.append(f, prefix.size(), std::string::npos);
        }
    }
    if (!members.empty()) pairs.emplace_back("vehicledata.synthetic", members);
    return encode_metadata(pairs);
}

std::string page_metadata(const Page& page) {
    if (page.synthetic.empty()) return {};
    std::string all;
    for (const auto& f : page.synthetic) {
        if (!all.empty()) all += ',';
        all += f;
    }
    return encode_metadata({{"vehicledata.synthetic", all}});
}

void fill_struct_schema(const Page& page, bool text_only, ArrowSchema* out) {
    auto priv = std::make_unique<SchemaPrivate>();
    const std::vector<std::size_t> which = exported(page, text_only);
    const std::size_t k = which.size();
    priv->child_structs.resize(k);
    priv->children.resize(k);
    // The text-only export (pandas' text columns, its schema kept per layout) carries no labels.
    const bool labels = !text_only && !page.synthetic.empty();
    for (std::size_t j = 0; j < k; ++j) {
        priv->children[j] = &priv->child_structs[j];
        const Column& c = page.columns[which[j]];
        auto child = std::make_unique<SchemaPrivate>();
        if (labels) child->metadata = column_metadata(page, c);
        fill_schema(&priv->child_structs[j], arrow_format(c), c.name, ARROW_FLAG_NULLABLE, child.release());
    }
    if (labels) priv->metadata = page_metadata(page);
    fill_schema(out, "+s", "", 0, priv.release());
}

void fill_struct_array(std::shared_ptr<const Page> page, bool text_only, ArrowArray* out) {
    auto priv = std::make_unique<ArrayPrivate>();
    const std::vector<std::size_t> which = exported(*page, text_only);
    const std::size_t k = which.size();
    priv->child_structs.resize(k);
    priv->children.resize(k);
    std::size_t filled = 0;
    try {
        for (; filled < k; ++filled) {
            priv->children[filled] = &priv->child_structs[filled];
            fill_column(&priv->child_structs[filled], page->columns[which[filled]], page);
        }
    } catch (...) {
        for (std::size_t i = 0; i < filled; ++i) release_array(&priv->child_structs[i]);
        throw;
    }
    out->length = static_cast<std::int64_t>(page->rows);
    priv->page = std::move(page);
    out->null_count = 0;
    out->offset = 0;
    out->n_buffers = 1;  // the struct's validity bitmap: absent (no null rows)
    out->n_children = static_cast<std::int64_t>(k);
    out->buffers = priv->buffers;
    out->children = k ? priv->children.data() : nullptr;
    out->dictionary = nullptr;
    out->release = &release_array;
    out->private_data = priv.release();
}

}  // namespace

bool is_text(const Column& c) { return c.kind == ColumnKind::String || c.kind == ColumnKind::Json; }

void export_schema(const Page& page, ArrowSchema* out) { fill_struct_schema(page, false, out); }

void export_array(std::shared_ptr<const Page> page, ArrowArray* out) { fill_struct_array(std::move(page), false, out); }

void export_text_schema(const Page& page, ArrowSchema* out) { fill_struct_schema(page, true, out); }

void export_text_array(std::shared_ptr<const Page> page, ArrowArray* out) {
    fill_struct_array(std::move(page), true, out);
}

void export_stream(std::shared_ptr<const Page> schema_page, PageSource next, ArrowArrayStream* out) {
    auto priv = std::make_unique<StreamPrivate>();
    priv->schema_page = std::move(schema_page);
    priv->next = std::move(next);
    out->get_schema = &stream_get_schema;
    out->get_next = &stream_get_next;
    out->get_last_error = &stream_last_error;
    out->release = &stream_release;
    out->private_data = priv.release();
}

void export_stream(std::vector<std::shared_ptr<const Page>> pages, std::shared_ptr<const Page> schema_page,
                   ArrowArrayStream* out) {
    auto list = std::make_shared<std::vector<std::shared_ptr<const Page>>>(std::move(pages));
    auto at = std::make_shared<std::size_t>(0);
    export_stream(std::move(schema_page), [list, at]() -> std::shared_ptr<const Page> {
        return *at < list->size() ? (*list)[(*at)++] : nullptr;
    }, out);
}

}  // namespace vehicledata::client
