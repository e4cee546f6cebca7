// The VIN decoder endpoint /api/vin/{vin}: the vPIC decode plus the matching trims.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call.h"

namespace vehicledata::emulator {

class Api;

void vin_decode(Api& api, const Call& call, httplib::Response& res);

// The catalogue trims of a vPIC model year/model/make, as the VIN answer ranks them: (trim id,
// lower("trim submodel description")) by id, kept until the data change (Store::data_generation).
// Thread-safe (one mutex); at most kMaxBytes of text, then it starts over.
class VinTrimCache {
public:
    using Trims = std::vector<std::pair<std::int64_t, std::string>>;
    // The cached list, or nullptr.
    std::shared_ptr<const Trims> get(int year, int model_id, int make_id, std::uint64_t generation);
    // Keeps `trims` (read under `generation`, taken before the query ran).
    void put(int year, int model_id, int make_id, std::shared_ptr<const Trims> trims, std::uint64_t generation);
    static constexpr std::size_t kMaxBytes = 16u << 20;

private:
    std::mutex mutex_;
    std::unordered_map<std::uint64_t, std::shared_ptr<const Trims>> lists_;
    std::size_t bytes_ = 0;
    std::uint64_t generation_ = 0;
};

}  // namespace vehicledata::emulator
