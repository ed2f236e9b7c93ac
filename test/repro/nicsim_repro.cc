// Reproductions of the papers' results on the modeled network. Each row compares one figure of a
// paper with ours and prints both; as a TAP test (make check) each row is a case that fails when
// ours is outside the stated tolerance. `nicsim_repro --table` (make repro) prints the same rows
// as a table, and `--full` averages Fig. 14 over the paper's ten random topologies instead of
// three.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "plan/barrier.h"
#include "plan/kbinomial.h"
#include "sim/bcast.h"

namespace nicsim {
namespace {

struct Row {
    std::string what;
    std::string paper;
    std::string ours;
    double ratio;  // ours / paper, NAN when the row is a yes/no claim
    bool ok;
};

std::vector<Row> rows;

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void within(const std::string& what, double paper, double ours, double tolerance, const char* unit) {
    const double ratio = ours / paper;
    rows.push_back({what, fmt("%.1f ", paper) + unit, fmt("%.1f ", ours) + unit, ratio,
                    std::fabs(ratio - 1) <= tolerance});
}

void claim(const std::string& what, const std::string& paper, const std::string& ours, bool ok) {
    rows.push_back({what, paper, ours, NAN, ok});
}

sim::BcastResult bcast(const sim::BcastSpec& spec) {
    std::string why;
    auto r = sim::run_bcast(spec, nullptr, &why);
    if (!r) {
        std::fprintf(stderr, "nicsim_repro: %s\n", why.c_str());
        std::exit(1);
    }
    return *r;
}

sim::BcastSpec preset_spec(const char* preset, int nodes) {
    sim::BcastSpec spec;
    spec.model = sim::preset_model(*sim::find_preset(preset));
    spec.model.nodes = nodes;
    return spec;
}

// seed 002 Fig. 12: the optimal k from Theorem 3.
void fig12() {
    int mismatches = 0;
    bool monotone = true;
    for (Rank n = 2; n <= 1024; ++n) {
        if (plan::optimal_k(n, 1) != plan::ceil_log2(n)) ++mismatches;
        int previous = plan::optimal_k(n, 1);
        for (std::int64_t m = 2; m <= 1024; ++m) {
            const int k = plan::optimal_k(n, m);
            monotone = monotone && k <= previous;
            previous = k;
        }
    }
    claim("seed 002 Fig. 12: m = 1 gives k = ceil(log2 n), n = 2..1024", "every n",
          std::to_string(1023 - mismatches) + " of 1023", mismatches == 0);
    claim("seed 002 Fig. 12: optimal k never grows with m (n <= 1024, m <= 1024)", "never",
          monotone ? "never" : "grows somewhere", monotone);
    std::int64_t first = 0;
    for (std::int64_t m = 1; m <= 64 && first == 0; ++m) {
        if (plan::optimal_k(16, m) == 1) first = m;
    }
    claim("seed 002 Fig. 12: n = 16 reaches k = 1", "by m = 16", "at m = " + std::to_string(first),
          first != 0 && first <= 16);
}

// seed 002 Fig. 14: optimal k-binomial against binomial on 64 nodes, averaged over topologies.
void fig14(int topologies) {
    double best = 0;
    std::int64_t best_m = 0;
    bool never_slower = true;
    std::string slower;
    for (const std::int64_t m : {1, 2, 4, 8, 16, 32, 64}) {
        double binomial = 0;
        double optimal = 0;
        for (int t = 0; t < topologies; ++t) {
            sim::BcastSpec spec = preset_spec("kesavan97", 64);
            spec.model.seed = static_cast<std::uint64_t>(t + 1);
            spec.bytes = static_cast<std::uint64_t>(m * spec.model.mtu);
            spec.tree = "binomial";
            binomial += bcast(spec).latency_us;
            spec.tree = "optimal";
            optimal += bcast(spec).latency_us;
        }
        if (optimal > binomial * 1.0001) {
            never_slower = false;
            slower += " m=" + std::to_string(m);
        }
        if (binomial / optimal > best) {
            best = binomial / optimal;
            best_m = m;
        }
    }
    claim("seed 002 Fig. 14: optimal k-binomial never slower than binomial (64 nodes, m <= 64)",
          "never", never_slower ? "never" : "slower at" + slower, never_slower);
    rows.push_back({"seed 002 Fig. 14: best speedup over binomial (m = " + std::to_string(best_m) + ")",
                    "up to 2.0x (at least 1.6x)", fmt("%.2fx", best), best / 2.0, best >= 1.6});
}

// The most packets an interior NIC held at once: seed 002 §3.3 compares the buffering of the
// nodes that forward (the root's send buffers hold the message either way).
std::size_t forwarder_peak(const sim::BcastResult& r, Rank root) {
    std::size_t peak = 0;
    for (Rank v = 0; v < static_cast<Rank>(r.peak_buffers.size()); ++v) {
        if (v != root) peak = std::max(peak, r.peak_buffers[v]);
    }
    return peak;
}

// seed 002 §3.3: FPFS never needs more NIC buffers than FCFS.
void buffers() {
    bool ok = true;
    std::string detail;
    for (const std::int64_t m : {4, 16, 64}) {
        for (const char* tree : {"binomial", "binary", "optimal"}) {
            sim::BcastSpec spec = preset_spec("kesavan97", 64);
            spec.bytes = static_cast<std::uint64_t>(m * spec.model.mtu);
            spec.tree = tree;
            spec.forwarding = "fpfs";
            const auto fpfs = forwarder_peak(bcast(spec), spec.root);
            spec.forwarding = "fcfs";
            const auto fcfs = forwarder_peak(bcast(spec), spec.root);
            ok = ok && fpfs <= fcfs;
            if (m == 64 && std::strcmp(tree, "binomial") == 0) {
                detail = std::to_string(fpfs) + " vs " + std::to_string(fcfs) + " (binomial, m = 64)";
            }
        }
    }
    claim("seed 002 §3.3: peak buffers of a forwarding NIC, FPFS <= FCFS (64 nodes, 3 trees, m = 4..64)",
          "FPFS <= FCFS", detail, ok);
}

// seed 000 Fig. 4 and Fig. 6 (left) with lfc-myrinet and binomial trees.
double peak_throughput(int nodes, const char* tree) {
    double best = 0;
    for (const std::uint64_t bytes : {1024u, 4096u, 16384u, 65536u, 262144u}) {
        sim::BcastSpec spec = preset_spec("lfc-myrinet", nodes);
        spec.bytes = bytes;
        spec.tree = tree;
        spec.messages = static_cast<int>(std::max<std::uint64_t>(16, (2u << 20) / bytes));
        best = std::max(best, bcast(spec).throughput_mbs);
    }
    return best;
}

void fig4_fig6() {
    for (const auto& [nodes, paper] : {std::pair{4, 22.0}, std::pair{61, 59.0}}) {
        sim::BcastSpec spec = preset_spec("lfc-myrinet", nodes);
        within("seed 000 Fig. 4: empty multicast latency, " + std::to_string(nodes) + " nodes", paper,
               bcast(spec).latency_us, 0.25, "us");
    }
    within("seed 000 Fig. 4: peak throughput, 4 nodes", 42.9, peak_throughput(4, "binomial"), 0.25, "MB/s");
    const double binomial = peak_throughput(61, "binomial");
    within("seed 000 Fig. 4: peak throughput, 61 nodes", 13.3, binomial, 0.25, "MB/s");
    const double chain = peak_throughput(61, "chain");
    const double binary = peak_throughput(61, "binary");
    claim("seed 000 Fig. 6 (left): 61 nodes, chain above binary and binomial", "chain > binary, binomial",
          fmt("%.1f", chain) + " > " + fmt("%.1f", binary) + ", " + fmt("%.1f MB/s", binomial),
          chain > binary && chain > binomial);
}

}  // namespace
}  // namespace nicsim

int main(int argc, char** argv) {
    using namespace nicsim;
    bool table = false;
    bool full = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--table") == 0) {
            table = true;
        } else if (std::strcmp(argv[i], "--full") == 0) {
            full = table = true;
        } else {
            std::fprintf(stderr, "nicsim_repro: %s: unknown option (--table, --full)\n", argv[i]);
            return 2;
        }
    }
    fig12();
    fig14(full ? 10 : 3);
    buffers();
    fig4_fig6();
    int failed = 0;
    if (table) {
        std::printf("%-90s | %-28s | %-34s | %s\n", "result", "paper", "ours", "ratio");
        for (const Row& r : rows) {
            std::printf("%-90s | %-28s | %-34s | %s%s\n", r.what.c_str(), r.paper.c_str(), r.ours.c_str(),
                        std::isnan(r.ratio) ? "-" : fmt("%.2f", r.ratio).c_str(), r.ok ? "" : "  FAILED");
            failed += r.ok ? 0 : 1;
        }
        return failed == 0 ? 0 : 1;
    }
    std::printf("1..%zu\n", rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::printf("%s %zu - %s: paper %s, ours %s%s\n", r.ok ? "ok" : "not ok", i + 1, r.what.c_str(),
                    r.paper.c_str(), r.ours.c_str(),
                    std::isnan(r.ratio) ? "" : (", ratio " + fmt("%.2f", r.ratio)).c_str());
    }
    return 0;
}
