// The response-body cache: rendered 200 answers of the read-only data endpoints, shared by all
// worker threads (docs/emulator.md, "Response cache").
//
// The data are read-only, so such an answer is a function of its key: the request target as sent
// (path and query, which the envelope's links repeat), the caller's access tier (full_access(),
// call.h: demo callers see the demo data-set only) and, for the VIN decoder, the current year.
// Entries also remember the store's data_generation() they were rendered under: an entry of an
// older generation is a miss. The server clears the cache on every control-plane request (reset,
// clock, faults, touch). Everything else about a request (authentication, rate limits and their
// headers, usage counters, faults, 403s, compression negotiation) still happens per request; a
// compressed variant is a separate entry of its own key.
//
// Bounded by bytes (key + body), least recently used first out; capacity 0 disables it.
// Thread-safe: one mutex around the index; entries are immutable and shared (shared_ptr), so a
// body being sent stays alive after its eviction.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace vehicledata::emulator {

struct CachedResponse {
    std::string body;
    httplib::Headers headers;      // as the handler set them (Content-Type, X-Emulator-Synthetic)
    std::uint64_t generation = 0;  // the store's data_generation() before it was rendered
};

class ResponseCache {
public:
    explicit ResponseCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}
    bool enabled() const { return max_bytes_ > 0; }
    // The entry of `key` rendered under `generation`, or nullptr; `count`: a hit or miss of the
    // statistics (not the lookups of compressed variants).
    std::shared_ptr<const CachedResponse> find(const std::string& key, std::uint64_t generation, bool count = true);
    // Stores an entry (ignored when disabled or larger than the whole capacity).
    void put(const std::string& key, std::shared_ptr<const CachedResponse> entry);
    // Drops every entry (the statistics stay).
    void clear();
    void reset_counts();
    // {"max_bytes":N,"bytes":N,"entries":N,"hits":N,"misses":N} for GET /_emulator/stats.
    std::string to_json() const;

private:
    struct Slot {
        std::string key;
        std::shared_ptr<const CachedResponse> entry;
        std::size_t bytes;
    };
    void evict_locked(std::size_t need);

    const std::size_t max_bytes_;
    mutable std::mutex mutex_;
    std::list<Slot> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<Slot>::iterator> index_;
    std::size_t bytes_ = 0;
    std::atomic<std::int64_t> hits_{0}, misses_{0};
};

}  // namespace vehicledata::emulator
