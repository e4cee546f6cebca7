// Loads the vPIC tables (schema "vpic" of the store's connections) into a vin::Decoder, once.
//
// Thread safety: load_vin_decoder is called from one thread.  VinDecoderSlot starts the load on
// its own thread at construction (the server listens meanwhile); get() may be called from any
// thread: it waits for the load once, then is one atomic read (no lock on the hot path).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "store.h"
#include "vehicledata/vin.h"

namespace vehicledata::emulator {

// The decoder over the store's vPIC tables, or nullptr when the store has none.  Throws
// StoreError when the tables are unreadable or `cancel` becomes true.
std::unique_ptr<const vin::Decoder> load_vin_decoder(Store& store, const std::atomic<bool>* cancel = nullptr);

class VinDecoderSlot {
public:
    explicit VinDecoderSlot(Store& store);
    ~VinDecoderSlot();  // cancels an unfinished load and joins it
    VinDecoderSlot(const VinDecoderSlot&) = delete;
    VinDecoderSlot& operator=(const VinDecoderSlot&) = delete;
    // The decoder once loaded (waits for the load), nullptr without vPIC tables; throws StoreError
    // when the load failed.
    const vin::Decoder* get();

private:
    std::atomic<const vin::Decoder*> ready_{nullptr};
    std::atomic<bool> cancel_{false};
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    std::string error_;
    std::unique_ptr<const vin::Decoder> decoder_;
    std::thread thread_;
};

}  // namespace vehicledata::emulator
