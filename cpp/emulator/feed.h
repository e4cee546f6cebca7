// The data feed: its ZIP archive (one CSV per storage table, columns as the v2 records) and its
// endpoints, /api/data-feeds/last-updated and /api/data-feeds/download.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "call.h"
#include "store.h"

namespace vehicledata::emulator {

class Api;

// The ZIP of the data feed, built on first use into a temporary file, and again
// after the data change (Store::data_generation).
class Feed {
public:
    explicit Feed(Store& store) : store_(store) {}
    ~Feed();
    struct File {
        std::string path;
        std::size_t size = 0;
        std::string etag;  // strong, of the bytes: "<size>-<CRC-32>" in hex, quotes included
        int fd = -1;
        std::uint64_t generation = 0;
        ~File();  // closes fd and removes the file (when the last download of it ends)
    };
    // Builds (once) and returns the archive; throws StoreError on failure.
    std::shared_ptr<const File> get();
    // The archive's size if it has been built, else 0 (never builds it).
    std::size_t built_size();

private:
    Store& store_;
    std::mutex mutex_;
    std::shared_ptr<File> file_;
};

// Writes every resource of the feed as CSV into a ZIP at `zip_path`.
void write_feed_zip(Store& store, const std::string& zip_path);

void feed_last_updated(Api& api, const Call& call, httplib::Response& res);
// The archive, whole (200) or the byte range of the call's Range header (206) when there is no
// If-Range or it matches the ETag; with ETag and Accept-Ranges: bytes (server.cpp adds the latter).
void feed_download(Api& api, const Call& call, httplib::Response& res);

}  // namespace vehicledata::emulator
