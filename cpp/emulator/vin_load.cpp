// Reads the vPIC tables once (the shared loader, vehicledata/vin_load.h) and compiles the decoder.
#include <malloc.h>

#include <functional>

#include "vin_load.h"

#include "vehicledata/vin_load.h"

namespace vehicledata::emulator {

namespace {

// The shared loader's queries through the store's statements (schema "vpic" attached).
vin::RowReader store_reader(Store& store, const std::atomic<bool>* cancel) {
    return [&store, cancel](const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) {
        Statement st = store.statement(sql);
        for (std::size_t n = 0; st.step(); ++n) {
            if ((n & 4095) == 0 && cancel && cancel->load(std::memory_order_relaxed))
                throw StoreError("VIN tables: load cancelled");
            row(st.get());
        }
    };
}

}  // namespace

std::unique_ptr<const vin::Decoder> load_vin_decoder(Store& store, const std::atomic<bool>* cancel) {
    if (!store.has_vpic()) return nullptr;
    auto decoder = std::make_unique<const vin::Decoder>(vin::load_tables(store_reader(store, cancel)));
    malloc_trim(0);  // the row copies are gone: give their pages back
    return decoder;
}

VinDecoderSlot::VinDecoderSlot(Store& store) {
    thread_ = std::thread([this, &store] {
        std::unique_ptr<const vin::Decoder> d;
        std::string error;
        try {
            d = load_vin_decoder(store, &cancel_);
        } catch (const std::exception& e) {
            error = e.what();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        decoder_ = std::move(d);
        error_ = std::move(error);
        done_ = true;
        ready_.store(decoder_.get(), std::memory_order_release);
        done_cv_.notify_all();
    });
}

VinDecoderSlot::~VinDecoderSlot() {
    cancel_ = true;
    if (thread_.joinable()) thread_.join();
}

const vin::Decoder* VinDecoderSlot::get() {
    if (const vin::Decoder* d = ready_.load(std::memory_order_acquire)) return d;
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return done_; });
    if (!error_.empty()) throw StoreError("VIN tables: " + error_);
    return decoder_.get();
}

}  // namespace vehicledata::emulator
