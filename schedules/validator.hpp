#pragma once
// Proves a timetable can run: every (op, microbatch, stage) appears exactly once, and executing
// ranks in order with the dependencies of timetable.hpp never gets stuck. Throws ScheduleError
// naming the missing/duplicated ops, or the ops in the wait-for cycle.
#include <string>

#include "schedules/timetable.hpp"

namespace hetsim {

void validate(const Timetable& timetable);

// The same for a timetable read from `file`: the error starts with the file's name (none when
// `file` is empty).
void validate(const Timetable& timetable, const std::string& file);

}  // namespace hetsim
