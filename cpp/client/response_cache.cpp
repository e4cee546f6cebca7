// The on-disk response cache: see vehicledata/client/response_cache.h.
#include "vehicledata/client/response_cache.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "vehicledata/jwt.h"

namespace vehicledata::client {

namespace {

constexpr std::string_view kMagic = "vehicledata-response-cache 1\n";
constexpr std::string_view kSuffix = ".vdc";
constexpr std::size_t kPadding = 64;          // spare capacity for the page decoder (SIMDJSON_PADDING)
constexpr std::int64_t kStaleTmpSeconds = 600; // a temporary file this old is a crashed writer's

std::int64_t now_epoch() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hex(std::string_view raw) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(raw.size() * 2);
    for (unsigned char c : raw) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// mkdir -p, new directories 0700.
bool make_dirs(const std::string& dir) {
    std::string path;
    std::size_t i = 0;
    while (i <= dir.size()) {
        std::size_t slash = dir.find('/', i);
        if (slash == std::string::npos) slash = dir.size();
        path = dir.substr(0, slash);
        if (!path.empty() && ::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return false;
        i = slash + 1;
    }
    struct stat sb;
    return ::stat(dir.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
}

// The whole file, at most `limit` bytes (nullopt if larger, unreadable or not a regular file).
std::optional<std::string> read_file(const std::string& path, std::int64_t limit) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat sb;
    if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (limit > 0 && sb.st_size > limit)) {
        ::close(fd);
        return std::nullopt;
    }
    std::string data;
    data.reserve(static_cast<std::size_t>(sb.st_size) + kPadding);
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) break;
        data.append(buf, static_cast<std::size_t>(n));
        if (limit > 0 && static_cast<std::int64_t>(data.size()) > limit) {
            ::close(fd);
            return std::nullopt;
        }
    }
    ::close(fd);
    return data;
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// One "name value\n" header line of an entry; false when the line is not that.
bool header(std::string_view& rest, std::string_view name, std::string_view& value) {
    const std::size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return false;
    std::string_view line = rest.substr(0, nl);
    if (line.size() < name.size() + 1 || line.substr(0, name.size()) != name || line[name.size()] != ' ') return false;
    value = line.substr(name.size() + 1);
    rest.remove_prefix(nl + 1);
    return true;
}

bool parse_int(std::string_view text, std::int64_t& out) {
    if (text.empty() || text.size() > 18) return false;
    std::int64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    out = v;
    return true;
}

// A header value may not hold a line break (a URL or Content-Type never does).
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

}  // namespace

ResponseCache::ResponseCache(ResponseCacheOptions options, std::string tier)
    : options_(std::move(options)), tier_(std::move(tier)) {
    while (options_.dir.size() > 1 && options_.dir.back() == '/') options_.dir.pop_back();
}

std::string ResponseCache::canonical_url(const std::string& url) {
    const std::size_t q = url.find('?');
    std::string head = url.substr(0, q);
    // scheme://host is case-insensitive; the path is not.
    const std::size_t scheme_end = head.find("://");
    if (scheme_end != std::string::npos) {
        const std::size_t host_end = std::min(head.find('/', scheme_end + 3), head.size());
        for (std::size_t i = 0; i < host_end; ++i)
            head[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(head[i])));
    }
    if (q == std::string::npos) return head;
    std::vector<std::string> pairs;
    std::size_t i = q + 1;
    while (i <= url.size()) {
        std::size_t amp = url.find('&', i);
        if (amp == std::string::npos) amp = url.size();
        if (amp > i) pairs.push_back(url.substr(i, amp - i));
        i = amp + 1;
    }
    auto name = [](const std::string& p) { return std::string_view(p).substr(0, p.find('=')); };
    std::stable_sort(pairs.begin(), pairs.end(),
                     [&](const std::string& a, const std::string& b) { return name(a) < name(b); });
    std::string out = head;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        out += k == 0 ? '?' : '&';
        out += pairs[k];
    }
    return out;
}

std::string ResponseCache::request_line(const std::string& method, const std::string& url) const {
    return method + " " + one_line(canonical_url(url));
}

std::string ResponseCache::path_for(const std::string& method, const std::string& url) const {
    const std::string key = jwt::hmac_sha256("vehicledata response cache", tier_ + "\n" + request_line(method, url));
    return options_.dir + "/" + hex(key) + std::string(kSuffix);
}

std::optional<Response> ResponseCache::lookup(const std::string& method, const std::string& url) {
    if (!enabled()) return std::nullopt;
    const std::string path = path_for(method, url);
    std::optional<std::string> data = read_file(path, options_.max_bytes > 0 ? options_.max_bytes : 0);
    if (!data) {
        struct stat sb;
        if (::lstat(path.c_str(), &sb) == 0) ::unlink(path.c_str());  // too large, or not a regular file
        return std::nullopt;
    }
    auto corrupt = [&]() -> std::optional<Response> {
        ::unlink(path.c_str());
        return std::nullopt;
    };
    std::string_view rest(*data);
    if (rest.substr(0, kMagic.size()) != kMagic) return corrupt();
    rest.remove_prefix(kMagic.size());
    std::string_view tier, request, stored, status, content_type, final_url, length;
    std::int64_t stored_at = 0, status_code = 0, body_size = 0;
    if (!header(rest, "tier", tier) || !header(rest, "request", request) || !header(rest, "stored", stored) ||
        !header(rest, "status", status) || !header(rest, "content-type", content_type) ||
        !header(rest, "url", final_url) || !header(rest, "body", length) || !parse_int(stored, stored_at) ||
        !parse_int(status, status_code) || !parse_int(length, body_size) ||
        static_cast<std::int64_t>(rest.size()) != body_size || status_code < 200 || status_code > 299)
        return corrupt();
    if (tier != tier_ || request != request_line(method, url)) return corrupt();  // not this entry's file
    const std::int64_t now = now_epoch();
    if (stored_at > now + 60) return corrupt();  // stored in the future: not to be trusted
    if (options_.ttl > 0 && static_cast<double>(now - stored_at) >= options_.ttl) return std::nullopt;  // expired
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used
    Response r;
    r.status = static_cast<long>(status_code);
    r.content_type = std::string(content_type);
    r.url = std::string(final_url);
    r.body.reserve(rest.size() + kPadding);
    r.body.assign(rest.data(), rest.size());
    r.content_length = body_size;
    return r;
}

void ResponseCache::remove(const std::string& method, const std::string& url) {
    if (enabled()) ::unlink(path_for(method, url).c_str());
}

bool ResponseCache::store(const std::string& method, const std::string& url, const Response& r) {
    if (!enabled() || r.status < 200 || r.status > 299 || !r.transferred()) return false;
    std::string head(kMagic);
    head += "tier " + tier_ + "\n";
    head += "request " + request_line(method, url) + "\n";
    head += "stored " + std::to_string(now_epoch()) + "\n";
    head += "status " + std::to_string(r.status) + "\n";
    head += "content-type " + one_line(r.content_type) + "\n";
    head += "url " + one_line(r.url) + "\n";
    head += "body " + std::to_string(r.body.size()) + "\n";
    const auto size = static_cast<std::int64_t>(head.size() + r.body.size());
    if (options_.max_bytes > 0 && size > options_.max_bytes) return false;
    if (!make_dirs(options_.dir)) return false;
    static std::atomic<std::uint64_t> counter{0};
    const std::string path = path_for(method, url);
    const std::string tmp = path + "." + std::to_string(::getpid()) + "." + std::to_string(++counter) + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    bool ok = write_all(fd, head) && write_all(fd, r.body);
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return false;
    }
    if (options_.max_bytes > 0) {
        std::lock_guard<std::mutex> lk(mutex_);
        if (!size_known_) {
            size_ = evict(options_.max_bytes);
            size_known_ = true;
        } else {
            size_ += size;  // a replaced file is counted twice: the next count corrects it
        }
        if (size_ > options_.max_bytes) size_ = evict(options_.max_bytes - options_.max_bytes / 10);
    }
    return true;
}

std::int64_t ResponseCache::evict(std::int64_t target) {
    struct Entry {
        std::string path;
        std::int64_t mtime_ns;
        std::int64_t size;
    };
    std::vector<Entry> entries;
    std::int64_t total = 0;
    const std::int64_t now = now_epoch();
    DIR* d = ::opendir(options_.dir.c_str());
    if (!d) return 0;
    while (dirent* e = ::readdir(d)) {
        std::string_view name(e->d_name);
        const bool entry = ends_with(name, kSuffix);
        const bool tmp = ends_with(name, ".tmp");
        if (!entry && !tmp) continue;
        std::string path = options_.dir + "/" + std::string(name);
        struct stat sb;
        if (::lstat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (tmp) {
            if (now - static_cast<std::int64_t>(sb.st_mtime) > kStaleTmpSeconds) ::unlink(path.c_str());
            continue;
        }
        const std::int64_t mtime_ns = static_cast<std::int64_t>(sb.st_mtim.tv_sec) * 1000000000LL + sb.st_mtim.tv_nsec;
        entries.push_back(Entry{std::move(path), mtime_ns, static_cast<std::int64_t>(sb.st_size)});
        total += static_cast<std::int64_t>(sb.st_size);
    }
    ::closedir(d);
    if (total <= target) return total;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime_ns < b.mtime_ns; });
    for (const Entry& e : entries) {
        if (total <= target) break;
        if (::unlink(e.path.c_str()) == 0) total -= e.size;
    }
    return total;
}

}  // namespace vehicledata::client
