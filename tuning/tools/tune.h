// nicoll-tune: the tuning-file command (man nicoll-tune(1)). One file per subcommand group:
// tune_main.cc (dispatch, validate, --help, options), tune_show.cc (show), tune_model.cc (generate
// --model), tune_measure.cc (generate --measure, calibrate), tune_writer.cc (a best-choice grid to
// a tuning file, adjacent equal cells merged into ranges, and written out).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "table.h"

namespace nicoll::tune {

using Args = std::vector<std::string>;

int cmd_validate(const Args& args);
int cmd_show(const Args& args);
int cmd_generate_model(const Args& args);
int cmd_generate_measure(const Args& args);
int cmd_calibrate(const Args& args);

// "nicoll-tune COMMAND: WHY" on stderr; returns 2, the exit status for bad usage.
int usage_error(std::string_view command, const std::string& why);

// --name VALUE pairs and flags; one line in *why for an unknown option, a missing value or a
// repeated one that is not `repeatable`.
struct Options {
    std::vector<std::pair<std::string, std::string>> given;
    bool has(std::string_view name) const;
    std::string text(std::string_view name, std::string_view fallback = {}) const;
    std::vector<std::string> all(std::string_view name) const;  // every value, in order
    // " --name value" for each of `names` given, in that order (values with spaces quoted), to
    // record the command in a file's provenance.
    std::string echo(std::initializer_list<std::string_view> names) const;
};
std::optional<Options> parse_options(const Args& args, const std::vector<std::string>& with_value,
                                     const std::vector<std::string>& flags,
                                     const std::vector<std::string>& repeatable, std::string* why);

// The items between commas, empty ones included ("a,,b": a, "", b; "": one empty item).
std::vector<std::string_view> split_list(std::string_view text);

// "2,4,8" or sizes with suffixes "8,4k,1M"; sorted, without repeats, each in [min, max].
std::optional<std::vector<std::uint64_t>> parse_list(std::string_view text, std::uint64_t min,
                                                     std::uint64_t max, std::string* why);
// The one value of option `name` (parse_list's syntax; `fallback` where it is absent); else empty,
// with "NAME: WHY" in *why, WHY being `what` (such as "one number") where it has several.
std::optional<std::uint64_t> parse_one(const Options& o, std::string_view name,
                                       std::string_view fallback, std::uint64_t min,
                                       std::uint64_t max, const char* what, std::string* why);

// The best choice for one cell of a grid.
struct Choice {
    std::string algorithm;
    int k = 0;                      // kbinomial's k, 0: not written
    std::uint64_t packet_size = 0;  // 0: not written (auto)
    bool operator==(const Choice& o) const {
        return algorithm == o.algorithm && k == o.k && packet_size == o.packet_size;
    }
};

// One collective's best choices over communicator sizes x message sizes, best[c][s].
struct Grid {
    tuning::Section section = tuning::Section::Bcast;
    std::vector<std::uint64_t> comm_sizes;
    std::vector<bool> several_nodes;  // per comm size: measured over several nodes (empty: none)
    std::vector<std::uint64_t> sizes;  // ignored for barriers
    std::vector<std::vector<Choice>> best;
};

// A tuning file: the provenance object's members (already JSON), then each grid's rules. A cell
// at comm size c_i holds from c_i (2 for the first) up to c_{i+1} - 1 (inf for the last); at size
// s_j from the geometric mean of s_{j-1} and s_j (0 for the first) up to the next one's start.
// Adjacent cells with the same choice become one rule, and adjacent communicator-size rows with
// the same rules one row. A row measured over several nodes holds only there: its rules say
// "nodes": [2, "inf"], and for other layouts a rule after them says auto, as beyond the largest
// communicator size.
std::string write_table(const std::vector<Grid>& grids, const std::vector<std::string>& provenance);

// `text` to --out, saying so on stderr, or to stdout when --out is absent or "-"; false, with one
// line, when it cannot be written.
bool write_out(const Options& o, const std::string& text, const char* command);

// generate's end: the grids' table (write_table), checked to load, then written out; the exit
// status.
int emit_table(const Options& o, const std::vector<Grid>& grids,
               const std::vector<std::string>& provenance);

// JSON string literal.
std::string quote(std::string_view s);

}  // namespace nicoll::tune
