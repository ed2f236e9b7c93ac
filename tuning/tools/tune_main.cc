// nicoll-tune: validate, show and generate tuning files (man nicoll-tune(1)).
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tune.h"

namespace nicoll::tune {

namespace {

constexpr const char* kHelp =
    R"(usage: nicoll-tune COMMAND [options]   (man nicoll-tune, man nicoll-tuning)
  validate FILE                    check a tuning file: exit 0 and a one-line summary, or every
                                   error (FILE:LINE:COL: JSON-PATH: reason) and exit 1
  show [--file FILE] --coll C --comm-size N --bytes B [--nodes N --ppn N --fabric F]
                                   the decision for one call and what made it: an MCA variable
                                   (OMPI_MCA_coll_nicoll_* in the environment), a rule of FILE,
                                   or a rule of the embedded default; --file - : the default only;
                                   --fabric: shm, ucx or pml carries every packet
  generate --model PRESET|FILE --comm-sizes LIST --sizes LIST [--colls LIST]
           [--algorithms LIST] [--packet-sizes LIST] [--set NAME=VALUE ...] [--out FILE]
                                   run the engine's simulator (nicsim presets, or a preset file
                                   written by calibrate) for every algorithm and k over the grid
                                   and write a tuning file of the fastest per cell;
                                   --set: a model parameter over the preset's (nicsim params),
                                   repeatable;
                                   --colls: of bcast,allgather,barrier; --algorithms: only these;
                                   --packet-sizes: packet sizes (mtu) to try besides the model's
  generate --measure --np LIST [--sizes LIST] [--ks LIST] [--packet-sizes LIST]
           [--iterations N] [--runs N] [--out FILE] [--bench PATH] [--mpirun-args "ARGS"]
                                   run nicoll-bench under mpirun on this machine for every
                                   algorithm over the grid (progress and time left on stderr) and
                                   write a tuning file of the fastest per cell (median of runs);
                                   --ks: kbinomial k values, --packet-sizes: packet sizes to try
                                   besides auto
  calibrate [--out FILE] [--bench PATH] [--mpirun-args "ARGS"] [--iterations N]
                                   measure this machine's one-way latency, bandwidth, t0, r_inf,
                                   n_1/2 (Pakin et al.) and per-packet overhead, and write a model
                                   preset file for generate --model
  --help, -h                       this text
Collectives (--coll): barrier, bcast, allgather, ibarrier, ibcast, iallgather, transport.
LIST: comma-separated, sizes with k/M/G suffixes (powers of 1024): 8,4k,1M.
Exit status: 0 ok, 1 invalid tuning file or a failed run, 2 bad usage.
)";

}  // namespace

int usage_error(std::string_view command, const std::string& why) {
    std::fprintf(stderr, "nicoll-tune%s%.*s: %s\n", command.empty() ? "" : " ",
                 static_cast<int>(command.size()), command.data(), why.c_str());
    return 2;
}

bool Options::has(std::string_view name) const {
    for (const auto& [k, v] : given) {
        if (k == name) return true;
    }
    return false;
}

std::string Options::text(std::string_view name, std::string_view fallback) const {
    for (const auto& [k, v] : given) {
        if (k == name) return v;
    }
    return std::string(fallback);
}

std::vector<std::string> Options::all(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : given) {
        if (k == name) out.push_back(v);
    }
    return out;
}

std::string Options::echo(std::initializer_list<std::string_view> names) const {
    std::string out;
    for (const std::string_view name : names) {
        for (const std::string& v : all(name)) {
            out += " " + std::string(name) + " " +
                   (v.find(' ') == std::string::npos ? v : "'" + v + "'");
        }
    }
    return out;
}

std::optional<Options> parse_options(const Args& args, const std::vector<std::string>& with_value,
                                     const std::vector<std::string>& flags,
                                     const std::vector<std::string>& repeatable, std::string* why) {
    Options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const bool takes = std::find(with_value.begin(), with_value.end(), a) != with_value.end();
        const bool flag = std::find(flags.begin(), flags.end(), a) != flags.end();
        if (!takes && !flag) {
            *why = a.rfind("-", 0) == 0 ? "unknown option " + a : "unexpected argument " + a;
            return std::nullopt;
        }
        if (o.has(a) && std::find(repeatable.begin(), repeatable.end(), a) == repeatable.end()) {
            *why = a + " given twice";
            return std::nullopt;
        }
        if (takes) {
            if (i + 1 >= args.size()) {
                *why = a + " needs a value";
                return std::nullopt;
            }
            o.given.emplace_back(a, args[++i]);
        } else {
            o.given.emplace_back(a, "");
        }
    }
    return o;
}

std::vector<std::string_view> split_list(std::string_view text) {
    std::vector<std::string_view> items;
    for (std::size_t pos = 0;;) {
        const std::size_t comma = std::min(text.find(',', pos), text.size());
        items.push_back(text.substr(pos, comma - pos));
        if (comma == text.size()) return items;
        pos = comma + 1;
    }
}

std::optional<std::vector<std::uint64_t>> parse_list(std::string_view text, std::uint64_t min,
                                                     std::uint64_t max, std::string* why) {
    std::vector<std::uint64_t> out;
    for (const std::string_view item : split_list(text)) {
        std::uint64_t v = 0;
        const tuning::SizeSyntax syntax = tuning::parse_size(item, &v);
        if (syntax != tuning::SizeSyntax::Ok) {
            *why = "\"" + std::string(item) + "\" in \"" + std::string(text) + "\": " +
                   (syntax == tuning::SizeSyntax::Negative
                        ? "below " + std::to_string(min)
                        : "not a number (an integer, optionally with k, M or G)");
            return std::nullopt;
        }
        if (v < min || v > max) {
            *why = std::to_string(v) + " in \"" + std::string(text) + "\": out of range " +
                   std::to_string(min) + ".." + std::to_string(max);
            return std::nullopt;
        }
        out.push_back(v);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::optional<std::uint64_t> parse_one(const Options& o, std::string_view name,
                                       std::string_view fallback, std::uint64_t min,
                                       std::uint64_t max, const char* what, std::string* why) {
    auto list = parse_list(o.text(name, fallback), min, max, why);
    if (list && list->size() == 1) return list->front();
    *why = std::string(name) + ": " + (list ? what : *why);
    return std::nullopt;
}

int cmd_validate(const Args& args) {
    if (args.size() != 1 || args[0].rfind("--", 0) == 0)
        return usage_error("validate", "expected one FILE");
    tuning::LoadResult r = tuning::load_table_file(args[0]);
    if (!r.table) {
        for (const std::string& e : r.errors) std::printf("%s\n", e.c_str());
        std::printf("%s: invalid, %zu error%s\n", args[0].c_str(), r.errors.size(),
                    r.errors.size() == 1 ? "" : "s");
        return 1;
    }
    std::string counts;
    std::size_t total = 0;
    for (int s = 0; s < tuning::kSections; ++s) {
        if (!r.table->present[s]) continue;
        total += r.table->sections[s].size();
        counts += std::string(counts.empty() ? "" : ", ") +
                  std::string(tuning::section_name(static_cast<tuning::Section>(s))) + " " +
                  std::to_string(r.table->sections[s].size());
    }
    std::printf("%s: valid, %zu rules (%s)%s%s\n", args[0].c_str(), total, counts.c_str(),
                r.table->provenance.empty() ? "" : "; generated by: ", r.table->provenance.c_str());
    return 0;
}

}  // namespace nicoll::tune

int main(int argc, char** argv) {
    using namespace nicoll::tune;
    Args args(argv + 1, argv + argc);
    if (args.empty())
        return usage_error("", "no command (validate, show, generate, calibrate; --help)");
    const std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (cmd == "validate") return cmd_validate(args);
    if (cmd == "show") return cmd_show(args);
    if (cmd == "calibrate") return cmd_calibrate(args);
    if (cmd == "generate") {
        const bool model = std::find(args.begin(), args.end(), "--model") != args.end();
        const bool measure = std::find(args.begin(), args.end(), "--measure") != args.end();
        if (model == measure)
            return usage_error("generate", "expected one of --model PRESET and --measure");
        return model ? cmd_generate_model(args) : cmd_generate_measure(args);
    }
    return usage_error(
        "", "unknown command \"" + cmd + "\" (validate, show, generate, calibrate; --help)");
}
