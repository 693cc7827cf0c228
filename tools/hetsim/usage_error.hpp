#pragma once
// A command line that does not parse, told in one line: what was wrong, the nearest known name
// for a mistyped command or flag, and where to look for the rest.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hetsim::cli {

// `args` are the arguments after the program's name.
std::string describe_usage_error(const CLI::App& app, const CLI::ParseError& error,
                                 const std::vector<std::string>& args);

}  // namespace hetsim::cli
