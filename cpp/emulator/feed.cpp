// The data feed: its archive (one CSV per storage table, columns as the v2 records), built into a
// temporary file and rebuilt after the data change, and its endpoints.
#include "feed.h"

#include <fcntl.h>
#include <minizip/zip.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "range.h"
#include "api.h"
#include "gate.h"
#include "vehicledata/envelope.h"

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
    if (format::parse_datetime(store.last_updated(), wall)) {
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

void feed_last_updated(Api& api, const Call&, httplib::Response& res) {
    std::string built = api.store_.last_updated();
    std::string out = "{\"last_updated\":";
    if (built.empty()) out.append("null");
    else format::append_json_string(out, built);
    out.push_back('}');
    set_json(res, std::move(out));
}

void feed_download(Api& api, const Call& call, httplib::Response& res) {
    if (!call.identity.valid)
        throw HttpError(401, envelope::kUnauthorized,
                        "Unauthorized" + (call.identity.problem.empty() ? std::string(": a valid JWT is required")
                                                                        : ": " + call.identity.problem));
    if (!call.identity.data_feed)
        throw HttpError(403, envelope::kForbidden, "Forbidden: the account has no data feed subscription");
    std::shared_ptr<const Feed::File> file = api.feed_.get();
    res.set_header("ETag", file->etag);
    // Range is answered here (server.cpp keeps cpp-httplib from applying it), unless an If-Range
    // does not match: then the whole archive, as RFC 9110 section 13.2.2 orders.
    const bool use_range = call.if_range.empty() || if_range_matches(call.if_range, file->etag);
    const ByteRange range = parse_byte_range(use_range ? call.range : std::string_view(), file->size);
    if (range.kind == ByteRange::Kind::Unsatisfiable) {
        res.set_header("Content-Range", content_range(range, file->size));
        throw HttpError(416, envelope::kRangeNotSatisfiable, "Range Not Satisfiable: " + range.problem);
    }
    std::size_t start = 0, length = file->size;
    res.status = 200;
    if (range.kind == ByteRange::Kind::Partial) {
        res.status = 206;
        start = range.first;
        length = range.last - range.first + 1;
        res.set_header("Content-Range", content_range(range, file->size));
    }
    res.set_header("Content-Disposition", "attachment; filename=\"vehicledata-feed.zip\"");
    res.set_content_provider(
        length, "application/zip",
        [file, start](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            char buf[65536];
            std::size_t n = std::min(length, sizeof buf);
            ssize_t got = ::pread(file->fd, buf, n, static_cast<off_t>(start + offset));
            if (got <= 0) return false;
            return sink.write(buf, static_cast<std::size_t>(got));
        });
}

namespace {

// The archive's strong ETag: its size and CRC-32, "<size>-<crc>" in lower-case hex, quoted. The
// archive's bytes follow from the data alone, so the tag survives a restart.
std::string archive_etag(int fd, std::size_t size) {
    uLong crc = crc32(0L, Z_NULL, 0);
    std::vector<unsigned char> buf(1 << 16);
    for (std::size_t at = 0; at < size;) {
        const ssize_t got = ::pread(fd, buf.data(), std::min(buf.size(), size - at), static_cast<off_t>(at));
        if (got <= 0) throw StoreError("cannot read the data feed archive");
        crc = crc32(crc, buf.data(), static_cast<uInt>(got));
        at += static_cast<std::size_t>(got);
    }
    char tag[48];
    std::snprintf(tag, sizeof tag, "\"%zx-%08lx\"", size, static_cast<unsigned long>(crc));
    return tag;
}

}  // namespace

Feed::~Feed() = default;

Feed::File::~File() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
}

std::size_t Feed::built_size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return file_ && file_->generation == store_.data_generation() ? file_->size : 0;
}

std::shared_ptr<const Feed::File> Feed::get() {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {  // another request is building the ZIP: wait without holding a turn of the cores
        const WorkerWait waiting;
        lock.lock();
    }
    const std::uint64_t generation = store_.data_generation();
    if (file_ && file_->generation == generation) return file_;
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/vehicledata-feed-XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    int fd = ::mkstemp(name.data());
    if (fd < 0) throw StoreError("cannot create a temporary file for the data feed");
    ::close(fd);
    auto f = std::make_shared<File>();
    f->path = name.data();
    f->generation = generation;
    write_feed_zip(store_, f->path);  // on failure, ~File removes it
    f->fd = ::open(f->path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (f->fd < 0 || ::fstat(f->fd, &st) != 0) throw StoreError("cannot read the data feed archive");
    f->size = static_cast<std::size_t>(st.st_size);
    f->etag = archive_etag(f->fd, f->size);
    file_ = f;
    return file_;
}

}  // namespace vehicledata::emulator
