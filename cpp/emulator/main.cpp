// vehicledata-emulator: the standalone executable.
//
// Prints "listening on http://HOST:PORT" as its first stdout line once the
// socket is bound; SIGINT/SIGTERM stop it cleanly (exit status 0).
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

#include <cstdio>
#include <exception>
#include <thread>

#include "server.h"

namespace {

// --parent-pid: the server ends with the process that started it, however that one ends
// (kill -9 included).  The kernel sends SIGTERM when the parent dies (PR_SET_PDEATHSIG; it
// fires when the forking *thread* ends, so a poll of getppid() every 100 ms is the fallback,
// also for a parent gone before prctl took effect).  Both end in the normal SIGTERM shutdown.
void watch_parent(pid_t parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    std::thread([parent] {
        while (::getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::kill(::getpid(), SIGTERM);
    }).detach();
}

}  // namespace

int main(int argc, char** argv) {
    namespace emu = vehicledata::emulator;
    std::vector<std::string> args(argv + 1, argv + argc);
    emu::Options options;
    try {
        bool help = false;
        options = emu::parse_options(args, help);
        if (help) {
            std::fputs(emu::usage_text().c_str(), stdout);
            return 0;
        }
    } catch (const emu::OptionsError& e) {
        std::fprintf(stderr, "vehicledata-emulator: %s\n%s", e.what(), emu::usage_text().c_str());
        return 2;
    }

    // Signals are taken by one waiting thread; every other thread blocks them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    if (options.parent_pid > 0) watch_parent(static_cast<pid_t>(options.parent_pid));

    try {
        emu::Server server(options);
        server.bind();
        std::printf("listening on %s\n", server.url().c_str());
        std::fflush(stdout);
        std::atomic<bool> finished{false};
        std::thread waiter([&] {
            int sig = 0;
            sigwait(&signals, &sig);
            // A signal may arrive before run() has started listening, when stop() is a no-op:
            // keep asking until run() has returned.
            while (!finished.load()) {
                server.stop();
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        server.run();
        finished.store(true);
        // run() only returns after stop() (or a failure): wake the waiter if it still waits.
        pthread_kill(waiter.native_handle(), SIGTERM);
        waiter.join();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vehicledata-emulator: %s\n", e.what());
        return 1;
    }
    return 0;
}
