#include <cmath>
#include <cstdio>
#include <fstream>

#include "tune.h"

namespace nicoll::tune {

std::string quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

namespace {

std::string size_json(std::uint64_t v) {
    if (v == tuning::kInf) return "\"inf\"";
    const std::string f = tuning::format_size(v);
    return f.back() >= '0' && f.back() <= '9' ? f : "\"" + f + "\"";
}

std::string range_json(std::uint64_t lo, std::uint64_t hi) {
    return "[" + size_json(lo) + ", " + size_json(hi) + "]";
}

struct Cell {
    std::uint64_t lo, hi;
    Choice choice;
    bool operator==(const Cell& o) const { return lo == o.lo && hi == o.hi && choice == o.choice; }
};

// Where each size's cell starts: 0, then the geometric mean of neighbours.
std::vector<std::uint64_t> starts(const std::vector<std::uint64_t>& sizes) {
    std::vector<std::uint64_t> out{0};
    for (std::size_t j = 1; j < sizes.size(); ++j) {
        auto mid = static_cast<std::uint64_t>(std::llround(
            std::sqrt(static_cast<double>(sizes[j - 1]) * static_cast<double>(sizes[j]))));
        if (mid <= sizes[j - 1]) mid = sizes[j - 1] + 1;
        if (mid > sizes[j]) mid = sizes[j];
        out.push_back(mid);
    }
    return out;
}

}  // namespace

std::string write_table(const std::vector<Grid>& grids,
                        const std::vector<std::string>& provenance) {
    std::string out = "{\n  \"version\": 1,\n  \"provenance\": {\n";
    for (std::size_t i = 0; i < provenance.size(); ++i) {
        out += "    " + provenance[i] + (i + 1 < provenance.size() ? ",\n" : "\n");
    }
    out += "  },\n";
    // Neither generator varies the packet size or the credits: say so, rather than leave the
    // section to the embedded default.
    out +=
        "  \"transport\": [\n    {\"comm_size\": [2, \"inf\"], \"packet_size\": \"auto\", "
        "\"credits\": \"auto\"}\n  ]";
    for (const Grid& g : grids) {
        const bool barrier =
            g.section == tuning::Section::Barrier || g.section == tuning::Section::Ibarrier;
        const std::vector<std::uint64_t> sizes = barrier ? std::vector<std::uint64_t>{0} : g.sizes;
        const std::vector<std::uint64_t> from = starts(sizes);
        // Each communicator-size row merged along the sizes, then equal rows merged.
        struct Row {
            std::uint64_t lo;  // first comm size
            bool several_nodes;
            std::vector<Cell> cells;
        };
        std::vector<Row> rows;
        for (std::size_t c = 0; c < g.comm_sizes.size(); ++c) {
            std::vector<Cell> cells;
            for (std::size_t s = 0; s < sizes.size(); ++s) {
                const std::uint64_t hi = s + 1 < sizes.size() ? from[s + 1] - 1 : tuning::kInf;
                if (!cells.empty() && cells.back().choice == g.best[c][s]) {
                    cells.back().hi = hi;
                } else {
                    cells.push_back({from[s], hi, g.best[c][s]});
                }
            }
            const std::uint64_t lo = c == 0 ? 2 : g.comm_sizes[c];
            const bool several = c < g.several_nodes.size() && g.several_nodes[c];
            if (!rows.empty() && rows.back().cells == cells &&
                rows.back().several_nodes == several) {
                continue;
            }
            rows.push_back({lo, several, std::move(cells)});
        }
        // A row reaches up to the next measured (or modelled) communicator size; beyond the
        // largest, nothing was measured, so the engine's auto decides.
        const std::uint64_t largest = g.comm_sizes.back();
        out += ",\n  \"" + std::string(tuning::section_name(g.section)) + "\": [\n";
        for (std::size_t r = 0; r < rows.size(); ++r) {
            const std::uint64_t hi = r + 1 < rows.size() ? rows[r + 1].lo - 1 : largest;
            for (const Cell& cell : rows[r].cells) {
                out += "    {\"comm_size\": " + range_json(rows[r].lo, hi);
                if (rows[r].several_nodes) out += ", \"nodes\": [2, \"inf\"]";
                if (!barrier) out += ", \"bytes\": " + range_json(cell.lo, cell.hi);
                out += ", \"algorithm\": " + quote(cell.choice.algorithm);
                if (cell.choice.k > 0) out += ", \"k\": " + std::to_string(cell.choice.k);
                if (cell.choice.packet_size > 0) {
                    out += ", \"packet_size\": " + size_json(cell.choice.packet_size);
                }
                out += "},\n";
            }
            if (rows[r].several_nodes) {  // on one node (or an unknown layout) nothing was measured
                out += "    {\"comm_size\": " + range_json(rows[r].lo, hi);
                if (!barrier) out += ", \"bytes\": " + range_json(0, tuning::kInf);
                out += ", \"algorithm\": \"auto\"},\n";
            }
        }
        out += "    {\"comm_size\": " + range_json(largest + 1, tuning::kInf);
        if (!barrier) out += ", \"bytes\": " + range_json(0, tuning::kInf);
        out += ", \"algorithm\": \"auto\"}\n  ]";
    }
    return out + "\n}\n";
}

bool write_out(const Options& o, const std::string& text, const char* command) {
    if (!o.has("--out") || o.text("--out") == "-") {
        std::fputs(text.c_str(), stdout);
        return true;
    }
    std::ofstream out(o.text("--out"));
    out << text;
    if (!out.flush()) {
        std::fprintf(stderr, "nicoll-tune %s: %s: cannot write\n", command,
                     o.text("--out").c_str());
        return false;
    }
    std::fprintf(stderr, "nicoll-tune %s: wrote %s\n", command, o.text("--out").c_str());
    return true;
}

int emit_table(const Options& o, const std::vector<Grid>& grids,
               const std::vector<std::string>& provenance) {
    const std::string text = write_table(grids, provenance);
    tuning::LoadResult check = tuning::load_table(text, "generated table");
    if (!check.table) {
        std::fprintf(stderr,
                     "nicoll-tune generate: internal error, the generated table is invalid: %s\n",
                     check.errors.front().c_str());
        return 1;
    }
    return write_out(o, text, "generate") ? 0 : 1;
}

}  // namespace nicoll::tune
