// The control plane under /_emulator/ (no auth, not rate-limited, not counted).
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "control.h"
#include "http_date.h"
#include "server.h"
#include "vehicledata/envelope.h"
#include "vehicledata/format.h"
#include "vehicledata/schema.h"

namespace vehicledata::emulator {

namespace {
constexpr std::size_t kMaxTouchIds = 10000;  // ids per touch call

void ok_json(httplib::Response& res, std::string body) {
    res.status = 200;
    res.body = std::move(body);
    res.set_header("Content-Type", "application/json");
}

bool json_object(const std::string& body, simdjson::dom::parser& parser, simdjson::dom::object& obj) {
    simdjson::padded_string padded(body);
    simdjson::dom::element root;
    if (parser.parse(padded).get(root)) return false;
    return !root.get_object().get(obj);
}
// The tables whose rows have an id and a `modified` timestamp, by the schema table.
std::vector<std::string> touchable_tables() {
    std::vector<std::string> out;
    for (const auto& r : schema::records()) {
        if (!r.primary) continue;
        bool id = false, modified = false;
        for (const auto& f : r.fields) {
            id = id || f.name == "id";
            modified = modified || f.name == "modified";
        }
        if (id && modified && std::find(out.begin(), out.end(), r.table) == out.end()) out.push_back(r.table);
    }
    return out;
}

// "YYYY-MM-DDTHH:MM:SS+HH:MM" to the same instant in the service's Eastern form (and as UTC
// seconds in `utc`); false if malformed.
bool eastern_timestamp(std::string_view text, std::string& out, std::int64_t& utc) {
    std::int64_t wall = 0;
    if (text.size() != 25 || text[10] != 'T' || (text[19] != '+' && text[19] != '-') || text[22] != ':' ||
        !format::parse_datetime(text.substr(0, 19), wall))
        return false;
    int hh = 0, mm = 0;
    for (std::size_t i : {20, 21, 23, 24})
        if (text[i] < '0' || text[i] > '9') return false;
    hh = (text[20] - '0') * 10 + (text[21] - '0');
    mm = (text[23] - '0') * 10 + (text[24] - '0');
    if (hh > 14 || mm > 59) return false;
    const std::int64_t offset = (text[19] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    utc = wall - offset;
    out = format::eastern_iso8601(utc);
    return true;
}

// The body of POST /_emulator/touch: {"table": name, "ids": [int, ...], "modified": optional timestamp}.
void parse_touch(const std::string& body, std::string& table, std::vector<std::int64_t>& ids, std::string& modified,
                 std::int64_t& modified_utc) {
    static const std::vector<std::string> tables = touchable_tables();
    std::string names;
    for (const auto& t : tables) names += (names.empty() ? "" : ", ") + t;
    const std::string shape = "touch: body must be {\"table\": one of " + names +
                              ", \"ids\": [integer, ...], \"modified\": optional \"YYYY-MM-DDTHH:MM:SS-05:00\"}";
    simdjson::dom::parser parser;
    simdjson::dom::object obj;
    if (!json_object(body, parser, obj)) throw std::invalid_argument(shape);
    for (auto field : obj) {
        const std::string_view k = field.key;
        if (k != "table" && k != "ids" && k != "modified")
            throw std::invalid_argument("touch: unknown key '" + std::string(k) + "'; " + shape);
    }
    std::string_view t;
    if (obj["table"].get_string().get(t)) throw std::invalid_argument(shape);
    table = std::string(t);
    if (std::find(tables.begin(), tables.end(), table) == tables.end())
        throw std::invalid_argument("touch: unknown table '" + table + "': expected one of " + names);
    simdjson::dom::array arr;
    if (obj["ids"].get_array().get(arr)) throw std::invalid_argument("touch: ids must be an array of integers");
    if (arr.size() == 0) throw std::invalid_argument("touch: ids must not be empty");
    if (arr.size() > kMaxTouchIds)
        throw std::invalid_argument("touch: at most " + std::to_string(kMaxTouchIds) + " ids per call (got " +
                                    std::to_string(arr.size()) + ")");
    for (auto v : arr) {
        std::int64_t id = 0;
        if (v.get_int64().get(id)) throw std::invalid_argument("touch: ids must be integers (got " + simdjson::minify(v) + ")");
        ids.push_back(id);
    }
    simdjson::dom::element m;
    if (!obj["modified"].get(m) && !m.is_null()) {
        std::string_view text;
        if (m.get_string().get(text) || !eastern_timestamp(text, modified, modified_utc))
            throw std::invalid_argument("touch: modified must be an ISO 8601 timestamp with offset, as "
                                        "\"2026-11-23T06:30:00-05:00\" (got " + simdjson::minify(m) + ")");
    }
}

}  // namespace

void control(ControlState& state, const httplib::Request& req, httplib::Response& res) {
    const std::string& path = req.path;
    const std::string& m = req.method;
    auto bad = [&](const std::string& msg) { write_error(res, 400, envelope::kBadRequest, path, msg, false); };
    auto wrong_method = [&](const char* allowed) {
        write_error(res, 405, envelope::kMethodNotAllowed, path, "Method Not Allowed: use " + std::string(allowed), false);
        res.set_header("Allow", allow_header(allowed));
    };
    if (path == "/_emulator/health") {
        if (m != "GET" && m != "HEAD") return wrong_method("GET");
        return ok_json(res, "{\"status\":\"ok\"}");
    }
    if (path == "/_emulator/reset") {
        if (m != "POST") return wrong_method("POST");
        state.limiter.reset();
        state.login_limiter.reset();
        state.usage.reset();
        state.faults.clear();
        state.stats.reset();
        state.response_cache.reset_counts();
        state.maintenance = false;
        state.clock.set_offset_seconds(0);
        state.store.untouch();
        return ok_json(res, "{\"status\":\"reset\"}");
    }
    if (path == "/_emulator/faults") {
        if (m == "DELETE") {
            state.faults.clear();
            return ok_json(res, "{\"faults\":0}");
        }
        if (m == "GET") return ok_json(res, "{\"faults\":" + std::to_string(state.faults.size()) + "}");
        if (m != "POST") return wrong_method("GET, POST, DELETE");
        try {
            state.faults.add(parse_fault(req.body));
        } catch (const std::invalid_argument& e) {
            return bad(e.what());
        }
        return ok_json(res, "{\"faults\":" + std::to_string(state.faults.size()) + "}");
    }
    if (path == "/_emulator/maintenance") {
        if (m == "GET") return ok_json(res, std::string("{\"enabled\":") + (state.maintenance ? "true" : "false") + "}");
        if (m != "POST") return wrong_method("GET, POST");
        simdjson::dom::parser parser;
        simdjson::dom::object obj;
        bool enabled = false;
        if (!json_object(req.body, parser, obj) || obj["enabled"].get_bool().get(enabled))
            return bad("maintenance: body must be {\"enabled\": true|false}");
        state.maintenance = enabled;
        return ok_json(res, std::string("{\"enabled\":") + (enabled ? "true" : "false") + "}");
    }
    if (path == "/_emulator/clock") {
        auto answer = [&] {
            ok_json(res, "{\"offset_seconds\":" + std::to_string(state.clock.offset_seconds()) +
                             ",\"now\":" + std::to_string(state.clock.now_seconds()) + "}");
        };
        if (m == "GET") return answer();
        if (m != "POST") return wrong_method("GET, POST");
        simdjson::dom::parser parser;
        simdjson::dom::object obj;
        int64_t offset = 0;
        if (!json_object(req.body, parser, obj) || obj["offset_seconds"].get_int64().get(offset) ||
            offset < -10LL * 365 * 86400 || offset > 10LL * 365 * 86400)
            return bad("clock: body must be {\"offset_seconds\": integer within 10 years}");
        state.clock.set_offset_seconds(offset);
        return answer();
    }
    if (path == "/_emulator/touch") {
        if (m != "POST") return wrong_method("POST");
        std::string table, modified;
        std::int64_t modified_utc = state.clock.now_seconds();
        std::vector<std::int64_t> ids;
        try {
            parse_touch(req.body, table, ids, modified, modified_utc);
        } catch (const std::invalid_argument& e) {
            return bad(e.what());
        }
        if (modified.empty()) modified = format::eastern_iso8601(modified_utc);
        std::vector<std::int64_t> missing;
        try {
            missing = state.store.touch(table, ids, modified, modified_utc);
        } catch (const StoreError& e) {
            write_error(res, 500, envelope::kInternalError, path, e.what(), false);
            return;
        }
        std::string out = "{\"touched\":" + std::to_string(ids.size() - missing.size()) + ",\"modified\":";
        format::append_json_string(out, modified);
        out += ",\"missing\":[";
        for (std::size_t i = 0; i < missing.size(); ++i) out += (i ? "," : "") + std::to_string(missing[i]);
        return ok_json(res, out + "]}");
    }
    if (path == "/_emulator/stats") {
        if (m != "GET") return wrong_method("GET");
        std::string out = state.stats.to_json();
        out.pop_back();  // the closing brace: the response cache's figures join the object
        const GateStats g = state.gate.stats();
        out += ",\"response_cache\":" + state.response_cache.to_json();
        out += ",\"store\":" + state.store.memory_json();
        out += ",\"gate\":{\"workers\":" + std::to_string(g.workers) + ",\"compute\":" + std::to_string(g.compute) +
               ",\"waiting\":" + std::to_string(g.waiting) + ",\"busy\":" + std::to_string(g.busy) +
               ",\"queued\":" + std::to_string(g.queued) + ",\"buffered_bytes\":" + std::to_string(g.buffered_bytes) +
               ",\"large_handed\":" + std::to_string(g.large_handed) +
               ",\"worker_writes\":" + std::to_string(g.worker_writes) + ",\"quick\":" + std::to_string(g.quick) + "}";
        return ok_json(res, out + "}");
    }
    write_error(res, 404, envelope::kNotFound, path, "Not Found: unknown control route", false);
}

bool drop_connection(const httplib::Request& req) {
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return false;
    bool done = false;
    while (dirent* e = ::readdir(dir)) {
        char* end = nullptr;
        long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd < 3) continue;
        sockaddr_storage peer{}, local{};
        socklen_t pl = sizeof peer, ll = sizeof local;
        if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;
        if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
        char ip[INET6_ADDRSTRLEN] = {0};
        int port = -1, lport = -1;
        if (peer.ss_family == AF_INET) {
            auto* a = reinterpret_cast<sockaddr_in*>(&peer);
            ::inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
            port = ntohs(a->sin_port);
            lport = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
        } else if (peer.ss_family == AF_INET6) {
            auto* a = reinterpret_cast<sockaddr_in6*>(&peer);
            ::inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
            port = ntohs(a->sin6_port);
            lport = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
        } else {
            continue;
        }
        if (port == req.remote_port && lport == req.local_port && req.remote_addr == ip) {
            ::shutdown(static_cast<int>(fd), SHUT_RDWR);
            done = true;
            break;
        }
    }
    ::closedir(dir);
    return done;
}

}  // namespace vehicledata::emulator
