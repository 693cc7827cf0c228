// libFuzzer target: timetable files (schedules/timetable_json.hpp). Properties: what loads writes
// back to the same JSON (parse -> write -> parse is lossless), and the validator either accepts
// it or refuses it with a ScheduleError, never anything else.
#include <cstdint>

#include "schedules/timetable_json.hpp"
#include "schedules/validator.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  return fuzz::expect_input_errors([&] {
    const std::string file = fuzz::scratch().write("timetable.json", data, size);
    const Timetable timetable = load_timetable(file);
    const nlohmann::json written = timetable_to_json(timetable);
    if (timetable_to_json(timetable_from_json(written, file)) != written)
      fuzz::finding("a timetable that does not read back as written: " + written.dump());
    try {
      validate(timetable, file);
    } catch (const ScheduleError&) {
      // A timetable that cannot run: the validator's documented answer.
    }
  });
}
