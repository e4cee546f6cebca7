// The response-body cache (response_cache.h).
#include "response_cache.h"

#include "vehicledata/format.h"

namespace vehicledata::emulator {

std::shared_ptr<const CachedResponse> ResponseCache::find(const std::string& key, std::uint64_t generation,
                                                          bool count) {
    if (!enabled()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end() && it->second->entry->generation != generation) {  // rendered before the data changed
        bytes_ -= it->second->bytes;
        lru_.erase(it->second);
        index_.erase(it);
        it = index_.end();
    }
    if (it == index_.end()) {
        if (count) misses_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    if (count) hits_.fetch_add(1, std::memory_order_relaxed);
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->entry;
}

void ResponseCache::put(const std::string& key, std::shared_ptr<const CachedResponse> entry) {
    const std::size_t size = key.size() + entry->body.size() + 256;  // 256: the slot, index and headers
    if (!enabled() || size > max_bytes_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
        bytes_ -= it->second->bytes;
        lru_.erase(it->second);
        index_.erase(it);
    }
    evict_locked(size);
    lru_.push_front(Slot{key, std::move(entry), size});
    index_.emplace(key, lru_.begin());
    bytes_ += size;
}

void ResponseCache::evict_locked(std::size_t need) {
    while (!lru_.empty() && bytes_ + need > max_bytes_) {
        bytes_ -= lru_.back().bytes;
        index_.erase(lru_.back().key);
        lru_.pop_back();
    }
}

void ResponseCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    index_.clear();
    lru_.clear();
    bytes_ = 0;
}

void ResponseCache::reset_counts() {
    hits_.store(0);
    misses_.store(0);
}

std::string ResponseCache::to_json() const {
    std::string out = "{\"max_bytes\":";
    format::append_int(out, static_cast<std::int64_t>(max_bytes_));
    {
        std::lock_guard<std::mutex> lock(mutex_);
        out.append(",\"bytes\":");
        format::append_int(out, static_cast<std::int64_t>(bytes_));
        out.append(",\"entries\":");
        format::append_int(out, static_cast<std::int64_t>(index_.size()));
    }
    out.append(",\"hits\":");
    format::append_int(out, hits_.load());
    out.append(",\"misses\":");
    format::append_int(out, misses_.load());
    out.push_back('}');
    return out;
}

}  // namespace vehicledata::emulator
