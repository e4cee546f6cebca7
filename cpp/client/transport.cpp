// libcurl transport: see vehicledata/client/transport.h.
#include "vehicledata/client/transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "vehicledata/client/errors.h"

namespace vehicledata::client {

namespace {

constexpr std::size_t kPadding = 64;  // SIMDJSON_PADDING: spare capacity for the parser
constexpr std::int64_t kReserveCap = 16LL << 20;  // reserve at most this much from a Content-Length
using Clock = std::chrono::steady_clock;

struct GlobalInit {
    GlobalInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

void ensure_global_init() {
    static GlobalInit once;
    (void)once;
}

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return std::string(s);
}

bool iequals_prefix(std::string_view line, std::string_view name) {
    if (line.size() < name.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(name[i])))
            return false;
    return true;
}

}  // namespace

std::string url_origin(const std::string& url) {
    auto scheme = url.find("://");
    if (scheme == std::string::npos) return "";
    auto end = url.find_first_of("/?#", scheme + 3);
    std::string origin = url.substr(0, end);
    for (auto& ch : origin) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return origin;
}

bool is_loopback_url(const std::string& url) {
    auto scheme = url.find("://");
    std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
    auto at = url.find('@', start);
    auto slash = url.find('/', start);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) start = at + 1;
    std::string host;
    if (start < url.size() && url[start] == '[') {
        auto close = url.find(']', start);
        host = url.substr(start + 1, close == std::string::npos ? std::string::npos : close - start - 1);
    } else {
        auto end = url.find_first_of(":/?#", start);
        host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    for (auto& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool numeric = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos &&
                   std::count(host.begin(), host.end(), '.') == 3;
    return host == "localhost" || host == "::1" || (numeric && host.rfind("127.", 0) == 0);
}

struct Transport::Impl {
    CURLSH* share = nullptr;
    std::mutex locks[CURL_LOCK_DATA_LAST];
    std::mutex pool_mutex;
    std::vector<CURL*> pool;

    static void lock_cb(CURL*, curl_lock_data data, curl_lock_access, void* user) {
        static_cast<Impl*>(user)->locks[data].lock();
    }
    static void unlock_cb(CURL*, curl_lock_data data, void* user) {
        static_cast<Impl*>(user)->locks[data].unlock();
    }

    Impl() {
        share = curl_share_init();
        curl_share_setopt(share, CURLSHOPT_LOCKFUNC, &Impl::lock_cb);
        curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, &Impl::unlock_cb);
        curl_share_setopt(share, CURLSHOPT_USERDATA, this);
        curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    }
    ~Impl() {
        for (CURL* e : pool) curl_easy_cleanup(e);
        if (share) curl_share_cleanup(share);
    }
    CURL* acquire() {
        {
            std::lock_guard<std::mutex> lk(pool_mutex);
            if (!pool.empty()) {
                CURL* e = pool.back();
                pool.pop_back();
                return e;
            }
        }
        return curl_easy_init();
    }
    void release(CURL* e) {
        std::lock_guard<std::mutex> lk(pool_mutex);
        pool.push_back(e);
    }
};

// One transfer in flight: its request, its response and libcurl state.
struct MultiBatch::Transfer {
    Transport* transport = nullptr;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    Request request;
    Response response;
    std::size_t id = 0;
    Clock::time_point last_check = Clock::now();
    Clock::time_point started = Clock::now();
    bool interrupted = false;
    bool sink_refused = false;
    std::int64_t* inflight = nullptr;  // the batch's bytes in flight (MultiBatch::inflight_bytes_)
    std::int64_t counted = 0;          // this transfer's share of them
    char errbuf[CURL_ERROR_SIZE] = {0};

    ~Transfer() {
        if (headers) curl_slist_free_all(headers);
    }

    // libcurl's callbacks are C frames: no exception may cross them.
    static size_t on_header(char* data, size_t size, size_t n, void* user) noexcept {
        auto* t = static_cast<Transfer*>(user);
        try {
            return header_line(t, data, size * n);
        } catch (...) {  // std::bad_alloc
            t->response.limit = "memory";
            return 0;
        }
    }

    static size_t on_body(char* data, size_t size, size_t n, void* user) noexcept {
        auto* t = static_cast<Transfer*>(user);
        try {
            return body_bytes(t, data, size * n);
        } catch (...) {  // std::bad_alloc
            t->response.limit = "memory";
            return 0;
        }
    }

    static size_t header_line(Transfer* t, char* data, size_t len) {
        std::string_view line(data, len);
        Response& r = t->response;
        if (line.rfind("HTTP/", 0) == 0) {  // a new response (after 100 Continue, proxies)
            r.content_type.clear();
            r.retry_after.clear();
            r.content_range.clear();
            r.content_encoding.clear();
            r.synthetic.clear();
        } else if (iequals_prefix(line, "content-type:")) {
            r.content_type = trim(line.substr(13));
        } else if (iequals_prefix(line, "retry-after:")) {
            r.retry_after = trim(line.substr(12));
        } else if (iequals_prefix(line, "content-range:")) {
            r.content_range = trim(line.substr(14));
        } else if (iequals_prefix(line, "content-encoding:")) {
            r.content_encoding = trim(line.substr(17));
        } else if (iequals_prefix(line, "x-emulator-synthetic:")) {
            r.synthetic = trim(line.substr(21));
        }
        return len;
    }

    static size_t body_bytes(Transfer* t, char* data, size_t len) {
        if (t->request.sink) {
            long status = 0;
            curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
            if (status >= 200 && status < 300) {
                if (!t->request.sink(status, t->response.content_range, data, len)) {
                    t->sink_refused = true;
                    return 0;  // abort: CURLE_WRITE_ERROR
                }
                return len;
            }
        }
        const TransportOptions& o = t->transport->options();
        std::string& body = t->response.body;
        curl_off_t wire = 0;
        curl_easy_getinfo(t->easy, CURLINFO_SIZE_DOWNLOAD_T, &wire);
        if (o.max_body > 0 && wire > o.max_body) {
            t->response.limit = "max_body";
            return 0;
        }
        if (o.max_decompressed > 0 && static_cast<std::int64_t>(body.size() + len) > o.max_decompressed) {
            t->response.limit = "max_decompressed";
            return 0;
        }
        if (body.empty()) {  // size the buffer once from Content-Length, within the limits (a claim is not a body)
            curl_off_t cl = -1;
            if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl > 0 &&
                cl <= std::min<std::int64_t>(kReserveCap, o.max_decompressed > 0 ? o.max_decompressed : kReserveCap))
                body.reserve(static_cast<std::size_t>(cl) + kPadding);
        }
        if (body.capacity() < body.size() + len + kPadding) {
            std::size_t want = std::max(body.capacity() * 2, body.size() + len + kPadding);
            if (o.max_decompressed > 0) want = std::min<std::size_t>(want, static_cast<std::size_t>(o.max_decompressed) + kPadding);
            body.reserve(std::max(want, body.size() + len + kPadding));
        }
        body.append(data, len);
        if (t->inflight) {
            *t->inflight += static_cast<std::int64_t>(len);
            t->counted += static_cast<std::int64_t>(len);
            if (o.max_body > 0 && *t->inflight > o.max_body) {
                t->response.limit = "max_body";
                return 0;
            }
        }
        return len;
    }

    static int on_progress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
        auto* t = static_cast<Transfer*>(user);
        auto now = Clock::now();
        if (now - t->last_check >= std::chrono::milliseconds(100)) {
            t->last_check = now;
            if (t->transport->interrupted()) {
                t->interrupted = true;
                return 1;
            }
            if (t->request.progress) {
                long status = 0;
                curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
                if (status >= 200 && status < 300)
                    t->request.progress(t->request.resume_from + dlnow,
                                        dltotal > 0 ? t->request.resume_from + dltotal : -1);
            }
        }
        return 0;
    }

    void setup() {
        const TransportOptions& o = transport->options();
        curl_easy_reset(easy);
        curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
        curl_easy_setopt(easy, CURLOPT_SHARE, transport->impl_->share);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(easy, CURLOPT_USERAGENT, o.user_agent.c_str());
        bool compress = o.compress > 0 || (o.compress < 0 && !is_loopback_url(request.url));
        if (compress) curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                         o.http2 ? static_cast<long>(CURL_HTTP_VERSION_2TLS) : static_cast<long>(CURL_HTTP_VERSION_1_1));
        // Wait for a possible HTTP/2 connection to multiplex on (TLS only: plain
        // http is HTTP/1.1 here, where waiting would serialise the transfers).
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, o.http2 && request.url.rfind("https://", 0) == 0 ? 1L : 0L);
        curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
        double connect = o.connect_timeout > 0 ? o.connect_timeout : 10.0;
        double total = request.timeout > 0 ? request.timeout : (o.timeout > 0 ? o.timeout : 60.0);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect * 1000));
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(total * 1000));
        if (o.low_speed_limit > 0) {
            double window = o.low_speed_time > 0 ? o.low_speed_time : (o.timeout > 0 ? o.timeout : 60.0);
            curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, o.low_speed_limit);
            curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(window + 0.5)));
        }
        // A body kept in memory refuses an announced size over the limit at once.
        if (!request.sink && o.max_body > 0) curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(o.max_body));
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, o.verify_tls ? 1L : 0L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, o.verify_tls ? 2L : 0L);
        if (!o.ca_bundle.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, o.ca_bundle.c_str());
        if (!o.proxy.empty()) curl_easy_setopt(easy, CURLOPT_PROXY, o.proxy.c_str());
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Transfer::on_body);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
        curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &Transfer::on_progress);
        curl_easy_setopt(easy, CURLOPT_XFERINFODATA, this);
        for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
        if (request.method == "POST") {
            headers = curl_slist_append(headers, "Expect:");
            curl_easy_setopt(easy, CURLOPT_POST, 1L);
            curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
        } else if (request.method != "GET") {
            curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
        }
        if (headers) curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        // A Range header, not CURLOPT_RESUME_FROM: curl refuses a 200 answer to a resumed
        // transfer ("doesn't seem to support byte ranges"); the sink decides to start over.
        std::string range;
        if (request.resume_from > 0) {
            range = std::to_string(request.resume_from) + "-";
            curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());
        }
        response.url = request.url;
        started = last_check = Clock::now();
    }

    void finish(CURLcode code) {
        Response& r = response;
        r.curl_code = static_cast<int>(code);
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r.status);
        long version = 0;
        curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
        r.http_version = version == CURL_HTTP_VERSION_2_0 ? 2 : (version == CURL_HTTP_VERSION_3 ? 3 : 1);
        curl_off_t cl = -1;
        if (curl_easy_getinfo(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK) r.content_length = cl;
        r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
        if (code == CURLE_FILESIZE_EXCEEDED && r.limit.empty()) r.limit = "max_body";
        if (code != CURLE_OK) {
            r.error = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(code));
            r.timed_out = code == CURLE_OPERATION_TIMEDOUT;
        }
        if (r.body.capacity() < r.body.size() + kPadding) r.body.reserve(r.body.size() + kPadding);
        // The easy handle keeps pointers to our header list: detach before freeing.
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
    }
};

Transport::Transport(TransportOptions options) : options_(std::move(options)) {
    ensure_global_init();
    if (options_.user_agent.empty()) options_.user_agent = std::string("vehicledata/") + VEHICLEDATA_VERSION;
    impl_ = std::make_unique<Impl>();
}

Transport::~Transport() = default;

Response Transport::perform(Request& request) {
    MultiBatch::Transfer t;
    t.transport = this;
    t.easy = impl_->acquire();
    t.request = std::move(request);
    t.setup();
    CURLcode code = curl_easy_perform(t.easy);
    t.finish(code);
    impl_->release(t.easy);
    request = std::move(t.request);
    if (t.interrupted) throw Interrupted();
    return std::move(t.response);
}

void Transport::sleep(double seconds) const {
    auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (true) {
        if (interrupted()) throw Interrupted();
        auto now = Clock::now();
        if (now >= end) return;
        std::this_thread::sleep_for(std::min<Clock::duration>(end - now, std::chrono::milliseconds(100)));
    }
}

MultiBatch::MultiBatch(Transport& transport) : transport_(transport) {
    multi_ = curl_multi_init();
    curl_multi_setopt(static_cast<CURLM*>(multi_), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
}

MultiBatch::~MultiBatch() {
    auto* m = static_cast<CURLM*>(multi_);
    for (auto& t : active_) {
        curl_multi_remove_handle(m, t->easy);
        curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, nullptr);
        curl_easy_setopt(t->easy, CURLOPT_ERRORBUFFER, nullptr);
        transport_.impl_->release(t->easy);
    }
    active_.clear();
    curl_multi_cleanup(m);
}

void MultiBatch::add(std::size_t id, Request request) {
    auto t = std::make_unique<Transfer>();
    t->transport = &transport_;
    t->easy = transport_.impl_->acquire();
    t->request = std::move(request);
    t->id = id;
    t->inflight = &inflight_bytes_;
    t->setup();
    curl_multi_add_handle(static_cast<CURLM*>(multi_), t->easy);
    active_.push_back(std::move(t));
}

bool MultiBatch::cancel(std::size_t id) {
    auto it = std::find_if(active_.begin(), active_.end(), [&](const auto& t) { return t->id == id; });
    if (it == active_.end()) return false;
    Transfer& t = **it;
    curl_multi_remove_handle(static_cast<CURLM*>(multi_), t.easy);
    curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(t.easy, CURLOPT_ERRORBUFFER, nullptr);
    transport_.impl_->release(t.easy);
    inflight_bytes_ -= t.counted;
    active_.erase(it);
    return true;
}

void MultiBatch::wakeup() { curl_multi_wakeup(static_cast<CURLM*>(multi_)); }

std::vector<std::pair<std::size_t, Response>> MultiBatch::poll(int timeout_ms) {
    auto* m = static_cast<CURLM*>(multi_);
    std::vector<std::pair<std::size_t, Response>> done;
    if (transport_.interrupted()) throw Interrupted();
    bool interrupted = false;
    auto collect = [&] {
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(m, &left)) {
            if (msg->msg != CURLMSG_DONE) continue;
            auto it = std::find_if(active_.begin(), active_.end(),
                                   [&](const auto& t) { return t->easy == msg->easy_handle; });
            if (it == active_.end()) continue;
            Transfer& t = **it;
            t.finish(msg->data.result);
            curl_multi_remove_handle(m, t.easy);
            transport_.impl_->release(t.easy);
            if (t.interrupted) interrupted = true;
            inflight_bytes_ -= t.counted;
            done.emplace_back(t.id, std::move(t.response));
            active_.erase(it);
        }
    };
    int running = 0;
    curl_multi_perform(m, &running);
    collect();
    // Wait for activity only when nothing finished yet (a finished transfer
    // lets the caller start the next one at once).
    if (done.empty()) {
        if (!active_.empty()) {
            curl_multi_poll(m, nullptr, 0, std::max(0, std::min(timeout_ms, 100)), nullptr);
            curl_multi_perform(m, &running);
            collect();
        } else if (timeout_ms > 0) {  // nothing to drive: wait for the timeout or a wakeup()
            curl_multi_poll(m, nullptr, 0, std::min(timeout_ms, 100), nullptr);
        }
    }
    if (interrupted) throw Interrupted();
    return done;
}

}  // namespace vehicledata::client
