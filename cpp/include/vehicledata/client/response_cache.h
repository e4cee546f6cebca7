// The client's optional on-disk response cache (docs/client.md, "Response cache").
//
// One file per answer, named by a hash of the access tier (anonymous, or which
// account: a hash of the token keyed by the secret) and the exact request
// (method and URL with its query parameters in a canonical order).  A file
// holds the answer's status, Content-Type, final URL and body, and the time it
// was stored; it is served while younger than the TTL.  Files are written to a
// temporary name and renamed (readers never see half a file), mode 0600 in a
// 0700 directory.  The directory is bounded: past max_bytes the least recently
// used files (by mtime, touched on every hit) are deleted.  A file that does
// not parse (truncated, foreign, another request's) is a miss and is deleted;
// a cache that cannot be read or written is a miss: never an exception.
//
// Threading: one ResponseCache may be used by several threads at once.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "vehicledata/client/transport.h"

namespace vehicledata::client {

struct ResponseCacheOptions {
    std::string dir;                      // "": no cache
    double ttl = 3600;                    // seconds an answer is served; <= 0: until evicted
    std::int64_t max_bytes = 256LL << 20; // the directory's files in total (LRU eviction past it)
};

class ResponseCache {
public:
    // `tier`: who asks (the same request of another tier is another entry).
    ResponseCache(ResponseCacheOptions options, std::string tier);

    bool enabled() const { return !options_.dir.empty(); }
    const ResponseCacheOptions& options() const { return options_; }

    // The stored answer of `method url` (status, content_type, url, body with
    // spare capacity for the decoder), or nullopt: absent, expired or corrupt
    // (a corrupt file is deleted).  A hit marks the file as recently used.
    std::optional<Response> lookup(const std::string& method, const std::string& url);
    // Store a 2xx answer of `method url`; false when it was not written (too
    // large for max_bytes, or an I/O error).  Never throws.
    bool store(const std::string& method, const std::string& url, const Response& r);
    // Forget one entry (an answer that failed to decode).
    void remove(const std::string& method, const std::string& url);

    // The file an entry of `method url` lives in.
    std::string path_for(const std::string& method, const std::string& url) const;
    // `url` with its query parameters ordered by name (a stable sort: the
    // order of repeated names is kept); scheme and host lower-cased.
    static std::string canonical_url(const std::string& url);

private:
    std::string request_line(const std::string& method, const std::string& url) const;
    // Delete the least recently used files until the directory holds at most
    // `target` bytes; returns what it holds then.
    std::int64_t evict(std::int64_t target);

    ResponseCacheOptions options_;
    std::string tier_;
    std::mutex mutex_;          // guards size_known_/size_
    bool size_known_ = false;
    std::int64_t size_ = 0;     // the directory's bytes as last counted plus what was stored since
};

}  // namespace vehicledata::client
