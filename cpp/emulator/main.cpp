// vehicledata-emulator: the standalone executable.
//
// Prints "listening on http://HOST:PORT" as its first stdout line once the
// socket is bound; SIGINT/SIGTERM stop it cleanly (exit status 0).
#include <signal.h>

#include <atomic>
#include <chrono>

#include <cstdio>
#include <exception>
#include <thread>

#include "vehicledata/emulator/server.h"

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
