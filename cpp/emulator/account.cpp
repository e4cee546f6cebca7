// Login, account usage and data-feed endpoints.
#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "vehicledata/emulator/api.h"
#include "vehicledata/emulator/range.h"

namespace vehicledata::emulator {

void Api::login(const Call& call, httplib::Response& res) {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(call.body);
    simdjson::dom::element root;
    if (call.body.empty()) throw HttpError(400, "BadRequestException", "Bad Request: the body must be JSON {\"api_token\": ..., \"api_secret\": ...}");
    if (parser.parse(padded).get(root))
        throw HttpError(400, "BadRequestException", "Bad Request: the body is not valid JSON");
    simdjson::dom::object obj;
    if (root.get_object().get(obj))
        throw HttpError(400, "BadRequestException", "Bad Request: the body must be a JSON object");
    std::string_view token, secret;
    if (obj["api_token"].get_string().get(token) || token.empty())
        throw HttpError(400, "BadRequestException", "Bad Request: api_token is required (a non-empty string)");
    if (obj["api_secret"].get_string().get(secret) || secret.empty())
        throw HttpError(400, "BadRequestException", "Bad Request: api_secret is required (a non-empty string)");
    const Account* a = auth_.find(token, secret);
    if (!a) throw HttpError(401, "UnauthorizedException", "Unauthorized: api_token and api_secret do not match an account");
    res.status = 200;
    res.body = auth_.issue(*a);
    res.set_header("Content-Type", "text/plain; charset=UTF-8");
}

void Api::account(const Call& call, httplib::Response& res, bool today) {
    if (!call.identity.valid)
        throw HttpError(500, "UnauthenticatedException",
                        "Unauthenticated" + (call.identity.problem.empty() ? std::string(": a valid JWT is required")
                                                                           : ": " + call.identity.problem));
    const std::int64_t now = clock_.now_seconds();
    std::string out;
    if (today) {
        out = "{\"count\":";
        format::append_int(out, usage_.today(call.identity.account_id, now));
        out.push_back('}');
    } else {
        out = "[";
        bool first = true;
        for (const auto& [date, n] : usage_.since_last_month(call.identity.account_id, now)) {
            if (!first) out.push_back(',');
            first = false;
            out.append("{\"date\":");
            format::append_json_string(out, date);
            out.append(",\"count\":");
            format::append_int(out, n);
            out.push_back('}');
        }
        out.push_back(']');
    }
    set_json(res, std::move(out));
}

void Api::feed_last_updated(const Call&, httplib::Response& res) {
    std::string built = store_.meta("built_at");
    std::string out = "{\"last_updated\":";
    if (built.empty()) out.append("null");
    else format::append_json_string(out, built);
    out.push_back('}');
    set_json(res, std::move(out));
}

void Api::feed_download(const Call& call, httplib::Response& res) {
    if (!call.identity.valid)
        throw HttpError(401, "UnauthorizedException",
                        "Unauthorized" + (call.identity.problem.empty() ? std::string(": a valid JWT is required")
                                                                        : ": " + call.identity.problem));
    if (!call.identity.data_feed)
        throw HttpError(403, "ForbiddenException", "Forbidden: the account has no data feed subscription");
    std::shared_ptr<const Feed::File> file = feed_.get();
    // Range is answered here (server.cpp keeps cpp-httplib from applying it).
    const ByteRange range = parse_byte_range(call.range, file->size);
    if (range.kind == ByteRange::Kind::Unsatisfiable) {
        res.set_header("Content-Range", content_range(range, file->size));
        throw HttpError(416, "RangeNotSatisfiableException", "Range Not Satisfiable: " + range.problem);
    }
    std::size_t start = 0, length = file->size;
    res.status = 200;
    if (range.kind == ByteRange::Kind::Partial) {
        res.status = 206;
        start = range.first;
        length = range.last - range.first + 1;
        res.set_header("Content-Range", content_range(range, file->size));
    }
    res.set_header("Content-Disposition", "attachment; filename=\"vehicledata-feed.zip\"");
    res.set_content_provider(
        length, "application/zip",
        [file, start](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            char buf[65536];
            std::size_t n = std::min(length, sizeof buf);
            ssize_t got = ::pread(file->fd, buf, n, static_cast<off_t>(start + offset));
            if (got <= 0) return false;
            return sink.write(buf, static_cast<std::size_t>(got));
        });
}

Feed::~Feed() = default;

Feed::File::~File() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
}

std::size_t Feed::built_size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return file_ && file_->generation == store_.data_generation() ? file_->size : 0;
}

std::shared_ptr<const Feed::File> Feed::get() {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t generation = store_.data_generation();
    if (file_ && file_->generation == generation) return file_;
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/vehicledata-feed-XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    int fd = ::mkstemp(name.data());
    if (fd < 0) throw StoreError("cannot create a temporary file for the data feed");
    ::close(fd);
    auto f = std::make_shared<File>();
    f->path = name.data();
    f->generation = generation;
    write_feed_zip(store_, f->path);  // on failure, ~File removes it
    f->fd = ::open(f->path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (f->fd < 0 || ::fstat(f->fd, &st) != 0) throw StoreError("cannot read the data feed archive");
    f->size = static_cast<std::size_t>(st.st_size);
    file_ = f;
    return file_;
}

}  // namespace vehicledata::emulator
