// Emulator command-line options (placeholder until the emulator lands).
namespace vehicledata::emulator {
int placeholder() { return 0; }
}  // namespace vehicledata::emulator
