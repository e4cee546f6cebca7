// vehicledata-emulator: standalone executable (stub until the emulator lands).
#include <cstdio>
int main() {
    std::puts("vehicledata-emulator: not yet implemented");
    return 0;
}
