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
#include <cstdlib>
#include <exception>
#include <thread>

#include "defaults.h"
#include "server.h"

namespace {

// --parent-pid: the server ends with the process that started it, however that one ends
// (kill -9 included).  The kernel sends SIGUSR2 when the parent dies (PR_SET_PDEATHSIG); it also
// fires when the forking *thread* ends while its process lives on (vehicledata.testing.Emulator
// started from a short-lived thread), so the signal only counts when getppid() has changed.  A
// poll of getppid() every 100 ms is the fallback, also for a parent gone before prctl took effect.
constexpr int kParentSignal = SIGUSR2;
// After the parent's death nobody waits for an answer: the shutdown (which lets running requests,
// a pending delay fault included, finish) may take this long before the process exits anyway.
constexpr auto kOrphanGrace = std::chrono::seconds(2);

pid_t g_parent = 0;

bool parent_gone() { return g_parent > 0 && ::getppid() != g_parent; }

void watch_parent(pid_t parent) {
    g_parent = parent;
    ::prctl(PR_SET_PDEATHSIG, kParentSignal);
    std::thread([] {
        while (!parent_gone()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::kill(::getpid(), kParentSignal);
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
        if (options.print_defaults) {
            std::puts(emu::defaults_json().c_str());
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
    sigaddset(&signals, kParentSignal);
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
            // The parent signal while the parent lives: the thread that started us ended, not the parent.
            while (sigwait(&signals, &sig) != 0 || (sig == kParentSignal && !parent_gone() && !finished.load())) {
            }
            if (sig == kParentSignal && !finished.load()) {
                std::thread([] {
                    std::this_thread::sleep_for(kOrphanGrace);
                    std::_Exit(0);
                }).detach();
            }
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
