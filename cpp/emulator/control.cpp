// The control plane under /_emulator/ (no auth, not rate-limited, not counted).
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>

#include <cstdlib>

#include "vehicledata/emulator/server.h"

namespace vehicledata::emulator {

namespace {
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
}  // namespace

void Server::control(const httplib::Request& req, httplib::Response& res) {
    const std::string& path = req.path;
    const std::string& m = req.method;
    auto bad = [&](const std::string& msg) { write_error(res, 400, "BadRequestException", path, msg, false); };
    auto wrong_method = [&](const char* allowed) {
        write_error(res, 405, "MethodNotAllowedException", path, "Method Not Allowed: use " + std::string(allowed), false);
        res.set_header("Allow", allowed);
    };
    if (path == "/_emulator/health") {
        if (m != "GET" && m != "HEAD") return wrong_method("GET");
        return ok_json(res, "{\"status\":\"ok\"}");
    }
    if (path == "/_emulator/reset") {
        if (m != "POST") return wrong_method("POST");
        limiter_.reset();
        login_limiter_.reset();
        usage_.reset();
        faults_.clear();
        stats_.reset();
        maintenance_ = false;
        clock_.set_offset_seconds(0);
        return ok_json(res, "{\"status\":\"reset\"}");
    }
    if (path == "/_emulator/faults") {
        if (m == "DELETE") {
            faults_.clear();
            return ok_json(res, "{\"faults\":0}");
        }
        if (m == "GET") return ok_json(res, "{\"faults\":" + std::to_string(faults_.size()) + "}");
        if (m != "POST") return wrong_method("GET, POST, DELETE");
        try {
            faults_.add(parse_fault(req.body));
        } catch (const std::invalid_argument& e) {
            return bad(e.what());
        }
        return ok_json(res, "{\"faults\":" + std::to_string(faults_.size()) + "}");
    }
    if (path == "/_emulator/maintenance") {
        if (m == "GET") return ok_json(res, std::string("{\"enabled\":") + (maintenance_ ? "true" : "false") + "}");
        if (m != "POST") return wrong_method("GET, POST");
        simdjson::dom::parser parser;
        simdjson::dom::object obj;
        bool enabled = false;
        if (!json_object(req.body, parser, obj) || obj["enabled"].get_bool().get(enabled))
            return bad("maintenance: body must be {\"enabled\": true|false}");
        maintenance_ = enabled;
        return ok_json(res, std::string("{\"enabled\":") + (enabled ? "true" : "false") + "}");
    }
    if (path == "/_emulator/clock") {
        auto answer = [&] {
            ok_json(res, "{\"offset_seconds\":" + std::to_string(clock_.offset_seconds()) +
                             ",\"now\":" + std::to_string(clock_.now_seconds()) + "}");
        };
        if (m == "GET") return answer();
        if (m != "POST") return wrong_method("GET, POST");
        simdjson::dom::parser parser;
        simdjson::dom::object obj;
        int64_t offset = 0;
        if (!json_object(req.body, parser, obj) || obj["offset_seconds"].get_int64().get(offset) ||
            offset < -10LL * 365 * 86400 || offset > 10LL * 365 * 86400)
            return bad("clock: body must be {\"offset_seconds\": integer within 10 years}");
        clock_.set_offset_seconds(offset);
        return answer();
    }
    if (path == "/_emulator/stats") {
        if (m != "GET") return wrong_method("GET");
        return ok_json(res, stats_.to_json());
    }
    write_error(res, 404, "NotFoundException", path, "Not Found: unknown control route", false);
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
