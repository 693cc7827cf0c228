// A report with a figure JSON cannot hold (inf, NaN: nlohmann writes them as null) is refused
// with the JSON pointer of the figure, never printed with a null in its place.
#include <doctest/doctest.h>

#include <limits>

#include "base/error.hpp"
#include "base/report_json.hpp"

using hetsim::dump_report;
using hetsim::SimulationError;

TEST_CASE("a finite report is printed as nlohmann prints it") {
  const nlohmann::json report = {{"iteration_time_s", 1.5}, {"gpus", {{{"peak_GiB", 12.0}}}}};
  CHECK(dump_report(report, 2) == report.dump(2));
}

TEST_CASE("inf, NaN and null are refused with where they are") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::string tail =
      "; expected a finite figure (an input at the edge of its range, such as a near-zero bandwidth "
      "or an extreme profile row, made it so)";
  CHECK_THROWS_WITH_AS(dump_report({{"iteration_time_s", inf}}, 2), ("report /iteration_time_s is inf" + tail).c_str(),
                       SimulationError);
  CHECK_THROWS_WITH_AS(dump_report({{"gpus", {{{"mfu", 0.4}}, {{"mfu", -nan}}}}}, 2),
                       ("report /gpus/1/mfu is nan" + tail).c_str(), SimulationError);
  CHECK_THROWS_WITH_AS(dump_report({{"a/b~c", -inf}}, 2), ("report /a~1b~0c is -inf" + tail).c_str(),
                       SimulationError);
  CHECK_THROWS_WITH_AS(dump_report({{"cost", nullptr}}, 2), ("report /cost is null" + tail).c_str(),
                       SimulationError);
}
