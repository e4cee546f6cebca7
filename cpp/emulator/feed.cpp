// The data feed archive: one CSV per storage table, columns as the v2 records.
#include <minizip/zip.h>

#include <ctime>

#include "vehicledata/emulator/api.h"

namespace vehicledata::emulator {

void write_feed_zip(Store& store, const std::string& zip_path) {
    zipFile zf = zipOpen64(zip_path.c_str(), APPEND_STATUS_CREATE);
    if (!zf) throw StoreError("cannot write the data feed archive " + zip_path);
    struct Closer {
        zipFile z;
        ~Closer() {
            if (z) zipClose(z, nullptr);
        }
    } closer{zf};

    // Entry timestamps: the database build time (Eastern wall time), so the archive is reproducible.
    zip_fileinfo info{};
    std::int64_t wall = 0;
    if (format::parse_datetime(store.meta("built_at"), wall)) {
        std::int64_t days = wall / 86400, secs = wall % 86400;
        int y;
        unsigned m, d;
        format::civil_from_days(days, y, m, d);
        info.tmz_date.tm_year = static_cast<unsigned>(y);
        info.tmz_date.tm_mon = m - 1;
        info.tmz_date.tm_mday = d;
        info.tmz_date.tm_hour = static_cast<unsigned>(secs / 3600);
        info.tmz_date.tm_min = static_cast<unsigned>(secs / 60 % 60);
        info.tmz_date.tm_sec = static_cast<unsigned>(secs % 60);
    } else {
        info.tmz_date.tm_year = 2000;
        info.tmz_date.tm_mday = 1;
    }

    std::string buf;
    for (const auto& r : schema::records()) {
        if (!r.primary) continue;
        const Plan plan = make_plan(r, false);
        const std::string name = r.table + ".csv";
        if (zipOpenNewFileInZip64(zf, name.c_str(), &info, nullptr, 0, nullptr, 0, nullptr, Z_DEFLATED, 6, 1) != ZIP_OK)
            throw StoreError("cannot add " + name + " to the data feed archive");
        buf.clear();
        write_csv_header(buf, plan);
        std::string order = plan.column_of("id") >= 0 ? " ORDER BY id" : (plan.column_of("code") >= 0 ? " ORDER BY code" : "");
        Statement st = store.statement("SELECT " + plan.select_list + " FROM " + r.table + order);
        auto flush = [&] {
            if (buf.empty()) return;
            if (zipWriteInFileInZip(zf, buf.data(), static_cast<unsigned>(buf.size())) != ZIP_OK)
                throw StoreError("cannot write " + name + " into the data feed archive");
            buf.clear();
        };
        while (st.step()) {
            write_csv_row(buf, st.get(), plan);
            if (buf.size() > (1u << 20)) flush();
        }
        flush();
        if (zipCloseFileInZip(zf) != ZIP_OK) throw StoreError("cannot finish " + name + " in the data feed archive");
    }
    closer.z = nullptr;
    if (zipClose(zf, nullptr) != ZIP_OK) throw StoreError("cannot finish the data feed archive");
}

}  // namespace vehicledata::emulator
