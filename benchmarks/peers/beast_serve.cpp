// A throwaway peer for benchmarks/serve_peers.py: Boost.Beast over Boost.Asio (Debian libboost-dev,
// header-only) reading each request with Beast's parser and answering every one with one file's
// bytes as application/json, keep-alive, an io_context run by N threads. Not part of the product.
// usage: beast_serve PORT FILE THREADS
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

static std::string body;  // the file's bytes

class Session : public std::enable_shared_from_this<Session> {
public:
    explicit Session(tcp::socket s) : stream_(std::move(s)) {}
    void start() { read(); }

private:
    void read() {
        req_ = {};
        http::async_read(stream_, buf_, req_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return;
            self->answer();
        });
    }
    void answer() {
        res_ = std::make_shared<http::response<http::span_body<const char>>>();
        res_->result(http::status::ok);
        res_->version(req_.version());
        res_->body() = beast::span<const char>(body.data(), body.size());
        res_->set(http::field::content_type, "application/json");
        res_->keep_alive(req_.keep_alive());
        res_->prepare_payload();
        http::async_write(stream_, *res_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec || !self->res_->keep_alive()) return;
            self->read();
        });
    }
    beast::tcp_stream stream_;
    beast::flat_buffer buf_;
    http::request<http::empty_body> req_;
    std::shared_ptr<http::response<http::span_body<const char>>> res_;
};

static void accept(tcp::acceptor& a) {
    a.async_accept([&a](beast::error_code ec, tcp::socket s) {
        if (!ec) {
            s.set_option(tcp::no_delay(true));
            std::make_shared<Session>(std::move(s))->start();
        }
        accept(a);
    });
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: beast_serve PORT FILE THREADS\n";
        return 2;
    }
    std::ifstream f(argv[2], std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    body = ss.str();
    const int threads = std::max(1, std::atoi(argv[3]));
    asio::io_context io(threads);
    tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::atoi(argv[1]))});
    a.listen(1024);
    accept(a);
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
    io.run();
}
