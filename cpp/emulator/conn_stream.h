// The connection stream: one connection's bytes in and out (Conn), and httplib's view of one
// complete request on it (ConnStream), for the gate (gate.h).
//
// Invariants:
// - Reads give the bytes of the request being served only ([request_start, request_length) of
//   Conn::buf); a pipelined request after it is not httplib's to see.
// - Writes go to the connection's output buffer (Conn::out), which the worker tries to send at once
//   (flush) and otherwise leaves to the reactor: a slow reader costs a buffer, not a worker. An
//   answer on httplib's path larger than max_output is still buffered whole (counted:
//   GateStats::large_handed); only one made while all buffers together are at max_output_total is
//   written by the worker itself as the socket drains (GateStats::worker_writes), waiting in a
//   WorkerWait (worker_turns.h), within the response's total deadline.
// - Each response has a total deadline (write_timeout_ms) from its first byte, not from the
//   request: computing an answer never eats into the time to send it.
// - A deferred body (defer(): the direct path's answers, direct.h) is not written at all: its
//   content provider is pulled as the socket drains (pump), by whichever thread sends, offering the
//   socket all that the provider yields and asking again from the first byte not taken, so nothing
//   is copied and no worker waits on a socket for it. Its first piece leaves with the answer's head
//   in one sendmsg (a cached body in memory: all of it, when the socket takes it).
// - stream_totals().buffered_bytes is the sum of every Conn::out's size (release_out keeps it so).
//
// Thread safety: a Conn, its ConnStream and pump()/release_out()/read_available() on it are used by
// one thread at a time: the reactor thread while the connection is not `busy`, the worker that took
// it from the worker turns while it is (the hand-over goes through WorkerTurns' mutex). The totals
// are atomics, read from any thread.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gate_limits.h"
#include "request_framing.h"

namespace vehicledata::emulator {

// A stream that can finish an answer by itself (the gate's connection stream): after the head,
// the writer hands over the body instead of writing it, and the gate sends it as the socket
// drains, calling `provider` as httplib does (offset, bytes wanted: all the rest, sink). What
// the socket does not take of a piece is not kept: the provider is called again from that
// offset when the socket drains, so it must yield the same bytes for the same offset (a body
// in memory, a file read with pread). `length` > 0; the provider (and what it holds) lives
// until the body is sent or the connection is closed.
class DeferringStream : public httplib::Stream {
public:
    virtual void defer(httplib::ContentProvider provider, std::size_t length) = 0;
};
// A rendered body over this size is deferred rather than written to the connection's buffer
// (direct.h).
constexpr std::size_t kPullBytes = 64 * 1024;

// The monotonic clock of the gate's deadlines, in milliseconds.
std::int64_t steady_ms();

// One connection: what arrived and is not answered yet, what is to send, and its state in the gate.
struct Conn {
    int fd = -1;
    std::string buf;
    std::int64_t deadline = 0;
    bool in_request = false;     // some bytes of a request have arrived
    bool continue_sent = false;
    bool eof = false;
    bool busy = false;           // with a worker
    bool close_after = false;
    bool lingering = false;      // refused: draining input until EOF or the deadline
    std::size_t request_start = 0;   // empty lines before it (skipped)
    std::size_t request_length = 0;  // where the request being served ends in buf
    bool request_close = false;      // its Connection header says close
    bool answered = false;           // a request of this connection has been answered (else: a newcomer)
    ChunkProgress progress;          // of the scan of buf's first request (reset when it is consumed)
    std::string out;                 // answer bytes not sent yet (ConnStream); the reactor sends them
    std::size_t out_pos = 0;         // sent of `out`
    bool writing = false;            // the reactor is sending `out` (and reads nothing meanwhile)
    httplib::ContentProvider provider;  // the rest of the answer's body, pulled as the socket drains
    std::size_t provided = 0;        // body bytes the provider has yielded
    std::size_t provide_end = 0;     // the body's length
    std::string remote_ip, local_ip;
    int remote_port = 0, local_port = 0;
};

// Whether a connection still has answer bytes to send (buffered, or a body still to pull).
inline bool pending(const Conn& c) { return !c.out.empty() || static_cast<bool>(c.provider); }

// Appends what the socket holds now to c.buf (dropped while lingering), up to `cap` bytes plus one
// read; sets c.eof at end of input or an error (an error also empties c.buf).
void read_available(Conn& c, std::size_t cap);

// What the connection streams count, all connections together (one gate per process).
struct StreamTotals {
    std::size_t buffered_bytes = 0;  // answer bytes in connections' output buffers
    std::uint64_t large_handed = 0;  // answers over max_output buffered for the reactor to send
    std::uint64_t worker_writes = 0; // answers a worker wrote itself, waiting on the socket
};
StreamTotals stream_totals();

// httplib's view of one complete request on a connection (the invariants above).
class ConnStream : public DeferringStream {
public:
    ConnStream(Conn& c, const GateLimits& limits);
    bool is_readable() const override;
    bool is_writable() const override;
    ssize_t read(char* ptr, size_t size) override;
    ssize_t write(const char* ptr, size_t size) override;
    void defer(httplib::ContentProvider provider, std::size_t length) override;
    // After the answer: sends what the socket takes now; the rest stays in c.out (and the
    // provider) for the reactor. False when the connection failed.
    bool flush();
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    socket_t socket() const override;
    bool failed() const { return failed_; }

    // Sends c.out, then pulls the deferred body and sends it, without waiting: stops when the
    // socket is full (what it did not take of c.out stays there; of the body, nothing is copied:
    // the provider is asked again from the first byte not taken) or all is sent. The provider is
    // asked for all the rest at once, so a body in memory goes out in one sendmsg when the socket
    // takes it. True unless the connection failed or the provider stopped (the connection is then
    // closed by the caller).
    static bool pump(Conn& c);
    // Empties c.out (its memory too when large).
    static void release_out(Conn& c);

private:
    // The response's total deadline runs from its first byte, not from the request: computing an
    // answer (the feed ZIP is built on its first request) never eats into the time to send it.
    inline void start_deadline() const;  // (defined in conn_stream.cpp, its only user)
    inline int wait_ms() const;
    ssize_t fail();
    // Writes a then b, waiting while the socket is full until the response's deadline.
    bool send_all(const char* a, std::size_t an, const char* b, std::size_t bn);

    Conn& c_;
    const GateLimits& limits_;
    mutable std::int64_t deadline_ = 0;  // set by the first write (start_deadline)
    std::size_t pos_;
    bool direct_ = false;
    bool large_ = false;  // the answer is over max_output (counted once)
    bool failed_ = false;
};

}  // namespace vehicledata::emulator
