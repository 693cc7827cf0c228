#include "tools/hetsim/usage_error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/json_input.hpp"

namespace hetsim::cli {

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(command->get_name());
  return names;
}

const CLI::App* command_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    if (command->get_name() == name) return command;
  return nullptr;
}

std::vector<std::string> flag_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

// CLI11's message on one line: its line breaks become spaces, the trailing one goes.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string describe_usage_error(const CLI::App& app, const CLI::ParseError& error,
                                 const std::vector<std::string>& args) {
  const std::vector<std::string> commands = command_names(app);
  if (args.empty() || args[0].empty() || args[0][0] == '-')
    return fmt::format("a command is required: one of {}; see hetsim --help", fmt::join(commands, ", "));
  const CLI::App* command = command_named(app, args[0]);
  if (command == nullptr) {
    const std::string near = nearest_word(args[0], commands);
    return fmt::format("unknown command \"{}\"{}; expected one of {}", args[0],
                       near.empty() ? "" : fmt::format(" (did you mean {}?)", near), fmt::join(commands, ", "));
  }
  std::string message = one_line(error.what());
  // A flag the command does not know: name the nearest one it does.
  const std::vector<std::string> flags = flag_names(*command);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0 || args[i] == "--") continue;
    const std::string flag = args[i].substr(0, args[i].find('='));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    const std::string near = nearest_word(flag, flags);
    if (!near.empty()) message += fmt::format(" (did you mean {} for {}?)", near, flag);
  }
  return fmt::format("{}; see hetsim {} --help", message, command->get_name());
}

}  // namespace hetsim::cli
