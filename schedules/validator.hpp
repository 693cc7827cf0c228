#pragma once
// Proves a timetable can run: every (op, microbatch, stage) appears exactly once, and executing
// ranks in order with the dependencies of timetable.hpp never gets stuck. Throws ScheduleError
// naming the missing/duplicated ops, or the ops in the wait-for cycle.
#include "schedules/timetable.hpp"

namespace hetsim {

void validate(const Timetable& timetable);

}  // namespace hetsim
