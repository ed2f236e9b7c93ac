#include "tools/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace nicsim::tools {

namespace {

std::string bound(std::int64_t v) { return std::to_string(v); }
std::string bound(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// `value` of option `name` as a T within [min, max]; otherwise empty, with *why naming both.
template <typename T>
std::optional<T> in_range(std::string_view name, const std::string& value, T min, T max,
                          const char* not_a_t, std::string* why) {
    T v{};
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc{} || ptr != value.data() + value.size() ||
        !std::isfinite(static_cast<double>(v))) {
        *why = std::string(name) + " " + value + ": " + not_a_t;
        return std::nullopt;
    }
    if (v < min || v > max) {
        *why = std::string(name) + " " + value + ": out of range " + bound(min) + ".." + bound(max);
        return std::nullopt;
    }
    return v;
}

}  // namespace

std::optional<Options> Options::parse(std::span<const OptionSpec> specs,
                                      std::span<char* const> args, std::string* why) {
    Options out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        const auto spec = std::find_if(specs.begin(), specs.end(),
                                       [&](const OptionSpec& s) { return s.name == arg; });
        if (spec == specs.end()) {
            *why = std::string(arg) + ": unknown option";
            return std::nullopt;
        }
        if (!spec->repeats && out.has(arg)) {
            *why = std::string(arg) + ": given twice";
            return std::nullopt;
        }
        std::string value;
        if (!spec->value.empty()) {
            if (i + 1 == args.size()) {
                *why = std::string(arg) + ": needs a value (" + std::string(spec->value) + ")";
                return std::nullopt;
            }
            value = args[++i];
        }
        out.given_.emplace_back(std::string(arg), std::move(value));
    }
    return out;
}

bool Options::has(std::string_view name) const {
    return std::any_of(given_.begin(), given_.end(),
                       [&](const auto& g) { return g.first == name; });
}

std::string Options::text(std::string_view name, std::string_view fallback) const {
    for (auto it = given_.rbegin(); it != given_.rend(); ++it) {
        if (it->first == name) return it->second;
    }
    return std::string(fallback);
}

std::vector<std::string> Options::all(std::string_view name) const {
    std::vector<std::string> values;
    for (const auto& [n, v] : given_) {
        if (n == name) values.push_back(v);
    }
    return values;
}

std::optional<std::int64_t> Options::integer(std::string_view name, std::int64_t fallback,
                                             std::int64_t min, std::int64_t max,
                                             std::string* why) const {
    return has(name) ? in_range(name, text(name), min, max, "not an integer", why) : fallback;
}

std::optional<double> Options::number(std::string_view name, double fallback, double min,
                                      double max, std::string* why) const {
    return has(name) ? in_range(name, text(name), min, max, "not a number", why) : fallback;
}

int usage_error(std::string_view command, const std::string& why) {
    std::fprintf(stderr, "nicsim %.*s: %s\n", static_cast<int>(command.size()), command.data(),
                 why.c_str());
    return 2;
}

std::string describe(std::span<const OptionSpec> specs) {
    std::string out;
    for (const OptionSpec& s : specs) {
        std::string head = "  " + std::string(s.name);
        if (!s.value.empty()) head += " " + std::string(s.value);
        if (head.size() < 24) head.resize(24, ' ');
        else head += "\n" + std::string(24, ' ');
        out += head + std::string(s.help) + "\n";
    }
    return out;
}

}  // namespace nicsim::tools
