// Batch VIN decoding into pages: see vehicledata/client/vin_batch.h.
#include "vehicledata/client/vin_batch.h"

#include <algorithm>
#include <exception>
#include <string_view>
#include <thread>

namespace vehicledata::client {

namespace {

enum Col { kVin, kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel, kErrorCode, kErrorText, kTrimId, kCols };

// A column's usual bytes per row (the VIN 17, an error text about 60): reserved up front.
constexpr std::size_t kBytesPerRow[kCols] = {17, 0, 10, 10, 6, 10, 14, 24, 16, 10, 2, 64, 0};

Page empty_batch_page(std::size_t rows) {
    Page p;
    p.record = "vin_batch";
    const auto& names = vin_batch_columns();
    for (std::size_t i = 0; i < names.size(); ++i) {
        Column c;
        c.name = names[i];
        const bool number = i == kYear || i == kTrimId;
        c.type = number ? schema::Type::Int64 : schema::Type::String;
        c.kind = number ? ColumnKind::Int64 : ColumnKind::String;
        c.valid.reserve(rows);
        if (number) {
            c.ints.reserve(rows);
        } else {
            c.offsets.reserve(rows + 1);
            c.bytes.reserve(rows * kBytesPerRow[i]);
        }
        p.columns.push_back(std::move(c));
    }
    return p;
}

void put_null(Column& c) {
    c.valid.push_back(0);
    ++c.null_count;
    if (c.kind == ColumnKind::Int64) c.ints.push_back(0);
    else c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size()));
}

void put_text(Column& c, std::string_view v) {
    c.valid.push_back(1);
    c.bytes.append(v.data(), v.size());
    c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size()));
}

void put_text(Column& c, const std::string_view* v) {
    if (v) put_text(c, *v);
    else put_null(c);
}

void put_int(Column& c, std::int64_t v) {
    c.valid.push_back(1);
    c.ints.push_back(v);
}

// The elements a row reads, in ascending id (Result::get_many), and their places in it.
constexpr int kRowElements[] = {vin::kBodyClass, vin::kCylinders, vin::kDisplacementL, vin::kDriveType,
                                vin::kEngineModel, vin::kFuelPrimary, vin::kModel, vin::kSeries,
                                vin::kTrim, vin::kErrorCode, vin::kErrorText};
enum RowElement { eBody, eCylinders, eDisplacement, eDrive, eEngineModel, eFuel, eModel, eSeries, eTrim,
                  eErrorCode, eErrorText, kRowElementCount };
static_assert(sizeof kRowElements / sizeof kRowElements[0] == kRowElementCount);

// "3.6L 6cyl LFX", the parts decoded, written straight into the column.
void put_engine(Column& c, const std::string_view* displacement, const std::string_view* cylinders,
                const std::string_view* model) {
    const std::size_t start = c.bytes.size();
    if (displacement) { c.bytes.append(*displacement); c.bytes.push_back('L'); }
    if (cylinders) {
        if (c.bytes.size() != start) c.bytes.push_back(' ');
        c.bytes.append(*cylinders);
        c.bytes.append("cyl");
    }
    if (model) {
        if (c.bytes.size() != start) c.bytes.push_back(' ');
        c.bytes.append(*model);
    }
    if (c.bytes.size() == start) {
        put_null(c);
    } else {
        c.valid.push_back(1);
        c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size()));
    }
}

void put_row(Page& p, std::string_view raw, bool is_null, const vin::Offline& decoder, int current_year,
             vin::RankMemo& memo, vin::RowAnswer& a) {
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
    decoder.decode_row(raw, current_year, memo, a);
    if (a.kind != vin::Answer::Kind::ok) {
        put_text(c[kVin], a.kind == vin::Answer::Kind::invalid ? raw : std::string_view(a.vin));
        for (int k : {kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel}) put_null(c[k]);
        put_text(c[kErrorCode], a.kind == vin::Answer::Kind::invalid ? "invalid_vin" : "not_found");
        put_text(c[kErrorText], a.message);
        put_null(c[kTrimId]);
        return;
    }
    const vin::Result& r = a.result;
    const std::string_view* v[kRowElementCount];
    r.get_many(kRowElements, kRowElementCount, v);
    put_text(c[kVin], a.vin);
    put_int(c[kYear], r.year);
    put_text(c[kMake], a.make);
    put_text(c[kModel], v[eModel]);
    put_text(c[kTrim], v[eTrim]);
    put_text(c[kSeries], v[eSeries]);
    put_text(c[kBody], v[eBody]);
    put_text(c[kDrive], v[eDrive]);
    put_engine(c[kEngine], v[eDisplacement], v[eCylinders], v[eEngineModel]);
    put_text(c[kFuel], v[eFuel]);
    put_text(c[kErrorCode], v[eErrorCode]);
    put_text(c[kErrorText], v[eErrorText]);
    if (a.has_trim) put_int(c[kTrimId], a.trim_id);
    else put_null(c[kTrimId]);
}

void decode_slice(Page& p, const VinInput& in, std::int64_t from, std::int64_t to, const vin::Offline& decoder,
                  int current_year) {
    vin::RankMemo memo;
    vin::RowAnswer answer;
    for (std::int64_t i = from; i < to; ++i) {
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
                current_year, memo, answer);
    }
}

}  // namespace

const std::vector<std::string>& vin_batch_columns() {
    static const std::vector<std::string> names = {"vin",  "year",   "make", "model",      "trim",       "series", "body",
                                                    "drive", "engine", "fuel", "error_code", "error_text", "trim_id"};
    return names;
}

std::vector<std::shared_ptr<Page>> decode_vin_batch(const vin::Offline& decoder, const VinInput& input, int threads,
                                                    int current_year) {
    const std::int64_t n = input.length;
    const std::int64_t most = std::max<std::int64_t>(1, n / 1024);
    const std::int64_t workers = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, most));
    std::vector<std::shared_ptr<Page>> pages(static_cast<std::size_t>(workers));
    std::vector<std::exception_ptr> errors(pages.size());
    auto run = [&](std::size_t w) {
        try {
            const std::int64_t from = n * static_cast<std::int64_t>(w) / workers;
            const std::int64_t to = n * static_cast<std::int64_t>(w + 1) / workers;
            auto page = std::make_shared<Page>(empty_batch_page(static_cast<std::size_t>(to - from)));
            decode_slice(*page, input, from, to, decoder, current_year);
            pages[w] = std::move(page);
        } catch (...) {
            errors[w] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < pages.size(); ++w) pool.emplace_back(run, w);
    run(0);
    for (auto& t : pool) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    return pages;
}

}  // namespace vehicledata::client
