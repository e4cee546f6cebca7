// Command-line options of the emulator (`vehicledata emulator`, `vehicledata-emulator`).
// Plain data; parse once on the main thread.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vehicledata::emulator {

struct Options {
    std::string host = "127.0.0.1";
    int port = 0;                    // 0: any free port
    std::string db;                  // "": default_database_path()
    std::string accounts_file;       // "": the built-in demo accounts
    int rate_limit = 600;            // requests per window per account (or client address)
    int login_rate_limit = 20;       // logins per window per client address
    int window_seconds = 60;         // length of the sliding rate-limit window
    std::int64_t token_ttl = 604800; // JWT lifetime in seconds
    int threads = 16;                // worker threads (each busy with one complete request at a time)
    int compute_workers = 0;         // of them, computing at once (others wait: delay faults, a feed build);
                                     // 0: twice the cores, at least 2 (worker_turns.h, default_compute)
    int max_connections = 4096;      // open connections (half from one address); more wait in the listen backlog (1024)
    int max_headers = 100;           // header fields per request (more: 431)
    int max_header_bytes = 16384;    // request line + header fields (more: 431)
    int request_timeout = 10;        // seconds from a request's first byte to its last (then 408)
    int idle_timeout = 5;            // seconds a keep-alive connection may wait for its next request
    int write_timeout = 30;          // seconds to send one whole response; a slower reader is dropped
    int max_per_address = 0;         // open connections from one address (more: 503); 0: half of max_connections
    int response_cache_mb = 64;      // rendered 200 answers cached (response_cache.h); 0 disables
    std::string control_token;       // "": /_emulator/ from loopback only; else X-Emulator-Token required
    std::string jwt_secret;          // "": random per process
    bool maintenance = false;        // start in maintenance mode (503 everywhere but the control plane)
    bool deprecated_403 = false;     // deprecated paths answer 403 DeprecatedException (as seen in 2026)
    bool quiet = true;               // no per-request log on stderr
    long parent_pid = 0;             // > 0: exit (as on SIGTERM) when this process, our parent, ends
    bool print_defaults = false;     // print defaults_json() (defaults.h) and exit
};

class OptionsError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Environment variables for the secrets, read when no flag (--control-token[-file],
// --jwt-secret[-file]) sets them: a process's environment is readable by its user only, its
// command line (/proc/PID/cmdline) by every local user.
inline constexpr const char* kControlTokenEnv = "VEHICLEDATA_EMULATOR_CONTROL_TOKEN";
inline constexpr const char* kJwtSecretEnv = "VEHICLEDATA_EMULATOR_JWT_SECRET";

// Parses argv[1..]; throws OptionsError naming the bad flag (or an unreadable or empty secret
// file).  `--help` sets help.
Options parse_options(const std::vector<std::string>& args, bool& help);
std::string usage_text();

// $VEHICLEDATA_HOME/vehicledata.db, else $XDG_DATA_HOME/vehicledata/vehicledata.db,
// else ~/.local/share/vehicledata/vehicledata.db.
std::string default_database_path();

}  // namespace vehicledata::emulator
