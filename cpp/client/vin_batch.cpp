// Batch VIN decoding into pages: see vehicledata/client/vin_batch.h.
#include "vehicledata/client/vin_batch.h"

#include <algorithm>
#include <exception>
#include <string_view>
#include <thread>

namespace vehicledata::client {

namespace {

enum Col { kVin, kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel, kErrorCode, kErrorText, kTrimId, kCols };

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
        if (number) c.ints.reserve(rows);
        else c.offsets.reserve(rows + 1);
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

// "3.6L 6cyl LFX", the parts decoded.
void put_engine(Column& c, const vin::Result& r) {
    std::string s;
    if (const auto* d = r.get(vin::kDisplacementL)) { s.append(*d); s.push_back('L'); }
    if (const auto* n = r.get(vin::kCylinders)) {
        if (!s.empty()) s.push_back(' ');
        s.append(*n);
        s.append("cyl");
    }
    if (const auto* m = r.get(vin::kEngineModel)) {
        if (!s.empty()) s.push_back(' ');
        s.append(*m);
    }
    if (s.empty()) put_null(c);
    else put_text(c, s);
}

void put_row(Page& p, std::string_view raw, bool is_null, const vin::Offline& decoder, int current_year,
             vin::RankMemo& memo) {
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
    const vin::Answer a = decoder.decode(raw, false, current_year, &memo);
    if (a.kind != vin::Answer::Kind::ok) {
        put_text(c[kVin], a.kind == vin::Answer::Kind::invalid ? raw : std::string_view(a.vin));
        for (int k : {kYear, kMake, kModel, kTrim, kSeries, kBody, kDrive, kEngine, kFuel}) put_null(c[k]);
        put_text(c[kErrorCode], a.kind == vin::Answer::Kind::invalid ? "invalid_vin" : "not_found");
        put_text(c[kErrorText], a.message);
        put_null(c[kTrimId]);
        return;
    }
    const vin::Result& r = a.result;
    put_text(c[kVin], a.vin);
    put_int(c[kYear], r.year);
    put_text(c[kMake], a.make);
    put_text(c[kModel], r.get(vin::kModel));
    put_text(c[kTrim], r.get(vin::kTrim));
    put_text(c[kSeries], r.get(vin::kSeries));
    put_text(c[kBody], r.get(vin::kBodyClass));
    put_text(c[kDrive], r.get(vin::kDriveType));
    put_engine(c[kEngine], r);
    put_text(c[kFuel], r.get(vin::kFuelPrimary));
    put_text(c[kErrorCode], r.get(vin::kErrorCode));
    put_text(c[kErrorText], r.get(vin::kErrorText));
    if (a.trims.empty()) put_null(c[kTrimId]);
    else put_int(c[kTrimId], a.trims.front().second);
}

void decode_slice(Page& p, const VinInput& in, std::int64_t from, std::int64_t to, const vin::Offline& decoder,
                  int current_year) {
    vin::RankMemo memo;
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
                current_year, memo);
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
