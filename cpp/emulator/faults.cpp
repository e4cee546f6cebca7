// Scheduled faults and request statistics of the control plane.
#include <simdjson.h>

#include <stdexcept>

#include "faults.h"
#include "vehicledata/format.h"

namespace vehicledata::emulator {

Fault parse_fault(std::string_view json_text) {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(json_text);
    simdjson::dom::element root;
    if (auto err = parser.parse(padded).get(root))
        throw std::invalid_argument(std::string("fault: body is not valid JSON: ") + simdjson::error_message(err));
    simdjson::dom::object obj;
    if (root.get_object().get(obj)) throw std::invalid_argument("fault: body must be a JSON object");
    Fault f;
    for (auto field : obj) {
        std::string_view key = field.key;
        simdjson::dom::element v = field.value;
        auto integer = [&](int lo, int hi) {
            int64_t n;
            if (v.get_int64().get(n) || n < lo || n > hi)
                throw std::invalid_argument("fault: " + std::string(key) + " must be an integer from " +
                                            std::to_string(lo) + " to " + std::to_string(hi));
            return static_cast<int>(n);
        };
        if (key == "path") {
            std::string_view p;
            if (v.get_string().get(p) || p.empty() || p[0] != '/' || p.size() > 2048)
                throw std::invalid_argument("fault: path must be a string starting with '/' (at most 2048 bytes)");
            f.path = std::string(p);
        } else if (key == "count") {
            f.count = integer(1, 1000000);
        } else if (key == "status") {
            f.status = integer(100, 599);
        } else if (key == "retry_after") {
            if (v.is_null()) f.retry_after = -1;
            else f.retry_after = integer(0, 86400);
        } else if (key == "delay_ms") {
            if (v.is_null()) f.delay_ms = 0;
            else f.delay_ms = integer(0, 60000);
        } else if (key == "body") {
            std::string_view b;
            if (v.is_null()) f.body.reset();
            else if (v.get_string().get(b)) throw std::invalid_argument("fault: body must be a string");
            else if (b.size() > kMaxFaultBody)
                throw std::invalid_argument("fault: body must be at most " + std::to_string(kMaxFaultBody) + " bytes");
            else f.body = std::string(b);
        } else if (key == "action") {
            std::string_view a;
            if (v.get_string().get(a)) throw std::invalid_argument("fault: action must be a string");
            if (a == "status") f.action = FaultAction::Status;
            else if (a == "drop") f.action = FaultAction::Drop;
            else if (a == "truncate") f.action = FaultAction::Truncate;
            else if (a == "delay") f.action = FaultAction::Delay;
            else throw std::invalid_argument("fault: action must be one of status, drop, truncate, delay");
        } else {
            throw std::invalid_argument("fault: unknown member '" + std::string(key) + "'");
        }
    }
    if (f.path.empty()) throw std::invalid_argument("fault: path is required");
    if (f.action == FaultAction::Delay && f.delay_ms <= 0)
        throw std::invalid_argument("fault: action delay needs delay_ms > 0");
    return f;
}

void Faults::add(Fault f) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (faults_.size() >= kMaxFaults)
        throw std::invalid_argument("fault: at most " + std::to_string(kMaxFaults) +
                                    " faults may be scheduled; DELETE /_emulator/faults clears them");
    faults_.push_back(std::move(f));
}

void Faults::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    faults_.clear();
}

std::size_t Faults::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return faults_.size();
}

std::optional<Fault> Faults::take(std::string_view path) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
        if (path.substr(0, it->path.size()) != it->path) continue;
        Fault f = *it;
        if (--it->count <= 0) faults_.erase(it);
        return f;
    }
    return std::nullopt;
}

void Stats::record(const std::string& path, int status) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++total_;
    // Bounded: past 1000 distinct paths the rest count under "(other)".
    auto it = by_path_.find(path);
    if (it != by_path_.end()) ++it->second;
    else if (by_path_.size() < 1000) by_path_.emplace(path, 1);
    else ++by_path_["(other)"];
    ++by_status_[status];
}

std::string Stats::to_json() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out = "{\"requests\":";
    format::append_int(out, total_);
    out.append(",\"by_path\":{");
    bool first = true;
    for (const auto& [p, n] : by_path_) {
        if (!first) out.push_back(',');
        first = false;
        format::append_json_string(out, p, format::JsonEscape::Plain);
        out.push_back(':');
        format::append_int(out, n);
    }
    out.append("},\"by_status\":{");
    first = true;
    for (const auto& [s, n] : by_status_) {
        if (!first) out.push_back(',');
        first = false;
        out.push_back('"');
        format::append_int(out, s);
        out.append("\":");
        format::append_int(out, n);
    }
    out.append("}}");
    return out;
}

void Stats::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    total_ = 0;
    by_path_.clear();
    by_status_.clear();
}

}  // namespace vehicledata::emulator
