// Emulator command-line options.
#include "options.h"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace vehicledata::emulator {

namespace {
template <class T>
T parse_number(const std::string& flag, const std::string& text, T min, T max) {
    T v{};
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size())
        throw OptionsError(flag + " expects an integer, got '" + text + "'");
    if (v < min || v > max)
        throw OptionsError(flag + " must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                           text);
    return v;
}

// A secret's text from a file (`--jwt-secret-file`): its contents without one trailing line end.
std::string read_secret_file(const std::string& flag, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw OptionsError(flag + ": cannot read '" + path + "'");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > 65536) throw OptionsError(flag + ": '" + path + "' is over 65536 bytes");
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) throw OptionsError(flag + ": '" + path + "' is empty");
    return text;
}
}  // namespace

std::string usage_text() {
    const Options d;  // the defaults shown are the struct's (one place: options.h)
    auto n = [](auto v) { return std::to_string(v); };
    return "usage: vehicledata-emulator [--host " + d.host + "] [--port " + n(d.port) + "] [--db PATH] [--accounts FILE]\n"
           "                            [--rate-limit " + n(d.rate_limit) + "] [--login-rate-limit " +
           n(d.login_rate_limit) + "] [--window-seconds " + n(d.window_seconds) + "]\n"
           "                            [--token-ttl " + n(d.token_ttl) + "] [--threads " + n(d.threads) +
           "] [--compute-workers " + n(d.compute_workers) + "]\n"
           "                            [--jwt-secret S | --jwt-secret-file F] [--maintenance]\n"
           "                            [--deprecated-403] [--log] [--max-connections " + n(d.max_connections) +
           "] [--max-headers " + n(d.max_headers) + "]\n"
           "                            [--max-header-bytes " + n(d.max_header_bytes) + "] [--request-timeout " +
           n(d.request_timeout) + "] [--idle-timeout " + n(d.idle_timeout) + "]\n"
           "                            [--write-timeout " + n(d.write_timeout) + "] [--max-per-address " +
           n(d.max_per_address) + "]\n"
           "                            [--response-cache-mb " + n(d.response_cache_mb) +
           "] [--control-token T | --control-token-file F]\n"
           "                            [--parent-pid PID] [--print-defaults]\n"
           "Prints 'listening on http://HOST:PORT' once it accepts connections; SIGINT/SIGTERM stop it.\n"
           "Without a flag, the secrets come from $" + std::string(kJwtSecretEnv) + " and $" + kControlTokenEnv +
           " (flags on the command line are visible to every local user).\n"
           "--print-defaults prints the option defaults and demo accounts as JSON and exits.\n";
}

Options parse_options(const std::vector<std::string>& args, bool& help) {
    Options o;
    help = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string flag = args[i];
        std::string value;
        bool inline_value = false;
        if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            inline_value = true;
        }
        auto need = [&]() -> const std::string& {
            if (inline_value) return value;
            if (i + 1 >= args.size()) throw OptionsError(flag + " needs a value");
            value = args[++i];
            return value;
        };
        if (flag == "-h" || flag == "--help") {
            help = true;
        } else if (flag == "--host") {
            o.host = need();
            if (o.host.empty()) throw OptionsError("--host must not be empty");
        } else if (flag == "--port") {
            o.port = parse_number<int>(flag, need(), 0, 65535);
        } else if (flag == "--db") {
            o.db = need();
        } else if (flag == "--accounts") {
            o.accounts_file = need();
        } else if (flag == "--rate-limit") {
            o.rate_limit = parse_number<int>(flag, need(), 1, 100000000);
        } else if (flag == "--login-rate-limit") {
            o.login_rate_limit = parse_number<int>(flag, need(), 1, 100000000);
        } else if (flag == "--window-seconds") {
            o.window_seconds = parse_number<int>(flag, need(), 1, 86400);
        } else if (flag == "--token-ttl") {
            o.token_ttl = parse_number<std::int64_t>(flag, need(), 1, 10LL * 365 * 86400);
        } else if (flag == "--threads") {
            o.threads = parse_number<int>(flag, need(), 1, 256);
        } else if (flag == "--compute-workers") {
            o.compute_workers = parse_number<int>(flag, need(), 0, 256);
        } else if (flag == "--max-connections") {
            o.max_connections = parse_number<int>(flag, need(), 1, 100000);
        } else if (flag == "--max-headers") {
            o.max_headers = parse_number<int>(flag, need(), 1, 10000);
        } else if (flag == "--max-header-bytes") {
            o.max_header_bytes = parse_number<int>(flag, need(), 1024, 1 << 20);
        } else if (flag == "--request-timeout") {
            o.request_timeout = parse_number<int>(flag, need(), 1, 3600);
        } else if (flag == "--idle-timeout") {
            o.idle_timeout = parse_number<int>(flag, need(), 1, 3600);
        } else if (flag == "--write-timeout") {
            o.write_timeout = parse_number<int>(flag, need(), 1, 86400);
        } else if (flag == "--max-per-address") {
            o.max_per_address = parse_number<int>(flag, need(), 0, 100000);
        } else if (flag == "--response-cache-mb") {
            o.response_cache_mb = parse_number<int>(flag, need(), 0, 1 << 20);
        } else if (flag == "--control-token") {
            o.control_token = need();
            if (o.control_token.empty()) throw OptionsError("--control-token must not be empty");
        } else if (flag == "--control-token-file") {
            o.control_token = read_secret_file(flag, need());
        } else if (flag == "--jwt-secret") {
            o.jwt_secret = need();
            if (o.jwt_secret.empty()) throw OptionsError("--jwt-secret must not be empty");
        } else if (flag == "--jwt-secret-file") {
            o.jwt_secret = read_secret_file(flag, need());
        } else if (flag == "--maintenance") {
            if (inline_value) throw OptionsError("--maintenance takes no value");
            o.maintenance = true;
        } else if (flag == "--deprecated-403") {
            if (inline_value) throw OptionsError("--deprecated-403 takes no value");
            o.deprecated_403 = true;
        } else if (flag == "--print-defaults") {
            if (inline_value) throw OptionsError("--print-defaults takes no value");
            o.print_defaults = true;
        } else if (flag == "--log") {
            o.quiet = false;
        } else if (flag == "--parent-pid") {
            o.parent_pid = parse_number<long>(flag, need(), 1, 1L << 30);
        } else {
            throw OptionsError("unknown option '" + args[i] + "'");
        }
    }
    // The environment (readable by this user only, unlike the command line) when no flag set them.
    if (const char* t = std::getenv(kControlTokenEnv); t && *t && o.control_token.empty()) o.control_token = t;
    if (const char* j = std::getenv(kJwtSecretEnv); j && *j && o.jwt_secret.empty()) o.jwt_secret = j;
    return o;
}

std::string default_database_path() {
    if (const char* h = std::getenv("VEHICLEDATA_HOME"); h && *h) return std::string(h) + "/vehicledata.db";
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/vehicledata/vehicledata.db";
    const char* home = std::getenv("HOME");
    return std::string(home ? home : ".") + "/.local/share/vehicledata/vehicledata.db";
}

}  // namespace vehicledata::emulator
