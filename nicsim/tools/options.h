// The nicsim command's option parsing: each subcommand declares its options once, and that
// declaration parses the command line, prints --help and is checked against the man page.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nicsim::tools {

struct OptionSpec {
    std::string_view name;     // "--nodes"
    std::string_view value;    // "N", or empty for a flag
    std::string_view help;
    bool repeats = false;      // may be given more than once (--set)
};

class Options {
public:
    // Parses `args` against `specs`. Empty, with one line in *why naming the option, for an
    // unknown option, a missing value or an option given twice.
    static std::optional<Options> parse(std::span<const OptionSpec> specs,
                                        std::span<char* const> args, std::string* why);

    bool has(std::string_view name) const;
    // The last value given, or `fallback`.
    std::string text(std::string_view name, std::string_view fallback = {}) const;
    std::vector<std::string> all(std::string_view name) const;
    // Integer values within [min, max]; on error *why names the option and the reason.
    std::optional<std::int64_t> integer(std::string_view name, std::int64_t fallback,
                                        std::int64_t min, std::int64_t max, std::string* why) const;

    // Numbers within [min, max], likewise.
    std::optional<double> number(std::string_view name, double fallback, double min, double max,
                                 std::string* why) const;

private:
    std::vector<std::pair<std::string, std::string>> given_;
};

// Bad usage: "nicsim COMMAND: WHY" on stderr; returns the exit status for it, 2.
int usage_error(std::string_view command, const std::string& why);

// "  --nodes N        nodes in the cluster" lines for --help.
std::string describe(std::span<const OptionSpec> specs);

}  // namespace nicsim::tools
