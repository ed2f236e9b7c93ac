// Reproductions of the papers' results on the modeled network. Each row compares one figure of a
// paper with ours and prints both; as a TAP test (make check) each row is a case that fails when
// ours is outside the stated tolerance. `nicsim_repro --table` (make repro) prints the same rows
// as a table, and `--full` averages Fig. 14 over the paper's ten random topologies instead of
// three.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/barrier.h"
#include "plan/kbinomial.h"
#include "sim/alltoall.h"
#include "sim/bcast.h"
#include "sim/fmmc.h"
#include "sim/collective.h"
#include "sim/fm_pt2pt.h"
#include "sim/hw_collective.h"
#include "plan/hwtree.h"
#include "sim/plot.h"

namespace nicsim {
namespace {

struct Row {
    std::string what;
    std::string paper;
    std::string ours;
    double ratio;  // ours / paper, NAN when the row is a yes/no claim
    bool ok;
    std::string gap;  // not reproduced, and why: an expected failure (TAP TODO), not a pass
    // The model parameters calibrated on this very row (then it checks the model's consistency,
    // not a prediction), or empty: predicted from parameters the papers give or calibrated on
    // other rows.
    std::string calibrated = {};
};

std::vector<Row> rows;

// With --plots: the figures drawn beside the rows, and whether to run the extra points they need.
bool plotting = false;
std::vector<sim::Figure> figures;

sim::Series ours(std::string label, std::vector<double> x, std::vector<double> y) {
    return {std::move(label), std::move(x), std::move(y), false};
}
sim::Series paper(std::string label, std::vector<double> x, std::vector<double> y) {
    return {std::move(label), std::move(x), std::move(y), true};
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void within(const std::string& what, double paper, double ours, double tolerance, const char* unit) {
    const double ratio = ours / paper;
    rows.push_back({what, fmt("%.1f ", paper) + unit, fmt("%.1f ", ours) + unit, ratio,
                    std::fabs(ratio - 1) <= tolerance, ""});
}

void claim(const std::string& what, const std::string& paper, const std::string& ours, bool ok) {
    rows.push_back({what, paper, ours, NAN, ok, ""});
}

// A claim the model does not reproduce, for a reason it states, when `ok` is false.
void known_gap(const std::string& what, const std::string& paper, const std::string& ours, bool ok,
               const std::string& why) {
    rows.push_back({what, paper, ours, NAN, ok, ok ? "" : why});
}

// The row just added is the one `parameters` were calibrated on (sim/model.cc says so beside
// each value).
void calibrated_on_it(const std::string& parameters) {
    rows.back().calibrated = parameters;
}

// A run's result; a run that fails is a bug, reported, and ends the reproductions.
template <typename Result>
Result must(std::optional<Result> result, const std::string& why) {
    if (!result) {
        std::fprintf(stderr, "nicsim_repro: %s\n", why.c_str());
        std::exit(1);
    }
    return *std::move(result);
}

sim::BcastResult bcast(const sim::BcastSpec& spec) {
    std::string why;
    auto r = sim::run_bcast(spec, nullptr, &why);
    return must(std::move(r), why);
}

sim::BcastSpec preset_spec(const char* preset, int nodes) {
    sim::BcastSpec spec;
    spec.model = sim::preset_model(*sim::find_preset(preset));
    spec.model.nodes = nodes;
    return spec;
}

// Kesavan and Panda Fig. 12: the optimal k from Theorem 3.
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
    claim("Kesavan and Panda Fig. 12: m = 1 gives k = ceil(log2 n), n = 2..1024", "every n",
          std::to_string(1023 - mismatches) + " of 1023", mismatches == 0);
    claim("Kesavan and Panda Fig. 12: optimal k never grows with m (n <= 1024, m <= 1024)", "never",
          monotone ? "never" : "grows somewhere", monotone);
    std::int64_t first = 0;
    for (std::int64_t m = 1; m <= 64 && first == 0; ++m) {
        if (plan::optimal_k(16, m) == 1) first = m;
    }
    claim("Kesavan and Panda Fig. 12: n = 16 reaches k = 1", "by m = 16", "at m = " + std::to_string(first),
          first != 0 && first <= 16);
    sim::Figure f{"kesavan-fig12", "Kesavan and Panda Fig. 12: optimal k (Theorem 3)",
                    "packets per message m", "optimal k", true, false, {}, {}};
    for (const Rank n : {16, 64, 1024}) {
        sim::Series line = ours("ours, n = " + std::to_string(n), {}, {});
        for (std::int64_t m = 1; m <= 1024; m *= 2) {
            line.x.push_back(static_cast<double>(m));
            line.y.push_back(plan::optimal_k(n, m));
        }
        f.series.push_back(line);
    }
    f.series.push_back(paper("paper: n = 16 at k = 1 by m = 16", {16}, {1}));
    figures.push_back(f);
}

// Kesavan and Panda Fig. 14: optimal k-binomial against binomial on 64 nodes, averaged over topologies.
void fig14(int topologies) {
    double best = 0;
    std::int64_t best_m = 0;
    bool never_slower = true;
    std::string slower;
    sim::Series speedup = ours("ours", {}, {});
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
        speedup.x.push_back(static_cast<double>(m));
        speedup.y.push_back(binomial / optimal);
    }
    figures.push_back({"kesavan-fig14",
                       "Kesavan and Panda Fig. 14: optimal k-binomial over binomial, 64 nodes",
                       "packets per message m", "speedup (binomial / optimal)", true, false, {},
                       {speedup, paper("paper: up to 2.0x", {64}, {2.0})}});
    claim("Kesavan and Panda Fig. 14: optimal k-binomial never slower than binomial (64 nodes, m <= 64)",
          "never", never_slower ? "never" : "slower at" + slower, never_slower);
    rows.push_back({"Kesavan and Panda Fig. 14: best speedup over binomial (m = " + std::to_string(best_m) + ")",
                    "up to 2.0x (at least 1.6x)", fmt("%.2fx", best), best / 2.0, best >= 1.6, ""});
}

// Kesavan and Panda Theorem 3 against the simulator: the k-binomial tree `nicoll-tune generate --model`
// finds fastest on 64 nodes (every k run, ties to the larger k) against Theorem 3's k, for m =
// 1..64 packets. The theorem is proved in §4.1's pipelined model, where a NIC sends one packet per
// step and every step is as long: kesavan97 with nic_timing=steps on a crossbar. On kesavan97
// itself (one NIC processor, an irregular network) a hop costs more than a send, and Theorem 3
// with those two costs (the engine's optimal tree) is measured against the fastest instead.
void theorem3_simulated() {
    sim::Figure by_k{"kesavan-latency-vs-k",
                     "Kesavan and Panda: k-binomial latency against k, 64 nodes, in its model",
                     "k", "latency (us)", false, true, {}, {}};
    for (const bool steps : {true, false}) {
        int same = 0;
        std::string differ;
        double worst = 1;  // the optimal tree's latency over the fastest k's
        for (std::int64_t m = 1; m <= 64; ++m) {
            sim::BcastSpec spec = preset_spec("kesavan97", 64);
            if (steps) {
                spec.model.nic_timing = "steps";
                spec.model.topology = "crossbar";
            }
            spec.bytes = static_cast<std::uint64_t>(m * spec.model.mtu);
            spec.tree = "kbinomial";
            int best_k = 0;
            double best = INFINITY;
            const bool drawn = steps && (m == 1 || m == 8 || m == 64);
            if (drawn) by_k.series.push_back(ours("ours, m = " + std::to_string(m), {}, {}));
            for (int k = plan::ceil_log2(64); k >= 1; --k) {
                spec.k = k;
                const double us = bcast(spec).latency_us;
                if (drawn) {
                    by_k.series.back().x.insert(by_k.series.back().x.begin(), k);
                    by_k.series.back().y.insert(by_k.series.back().y.begin(), us);
                }
                if (us < best) {
                    best = us;
                    best_k = k;
                }
            }
            const int theorem = plan::optimal_k(64, m);
            if (best_k == theorem) {
                ++same;
            } else {
                differ += " m=" + std::to_string(m) + ":" + std::to_string(best_k) + "/" + std::to_string(theorem);
            }
            spec.tree = "optimal";
            spec.k = 0;
            worst = std::max(worst, bcast(spec).latency_us / best);
        }
        const std::string ours = std::to_string(same) + " of 64" + (differ.empty() ? "" : " (ours/theorem:" + differ + ")");
        if (steps) {
            claim("Kesavan and Panda Theorem 3 in its model (kesavan97, nic_timing=steps, crossbar; 64 nodes, m = 1..64): "
                  "simulated fastest k (nicoll-tune generate --model) = Theorem 3's k",
                  "every m", ours, same == 64);
        } else {
            claim("Kesavan and Panda Theorem 3 on kesavan97 (one NIC processor, irregular network; 64 nodes, m = 1..64): "
                  "the optimal tree (Theorem 3 with a hop's and a send's cost) within 5 % of the fastest k; "
                  "Theorem 3's own k is the fastest at " + ours,
                  "(not in the paper)", fmt("at most %.1f %% slower", (worst - 1) * 100), worst <= 1.05);
        }
    }
    // Where the paper's analysis (Theorem 3) puts each drawn line's minimum.
    sim::Series theorem = paper("paper: Theorem 3's k", {}, {});
    for (std::size_t i = 0; i < by_k.series.size(); ++i) {
        const std::int64_t m = i == 0 ? 1 : i == 1 ? 8 : 64;
        const int k = plan::optimal_k(64, m);
        theorem.x.push_back(k);
        theorem.y.push_back(by_k.series[i].y[static_cast<std::size_t>(k - 1)]);
    }
    by_k.series.push_back(theorem);
    figures.push_back(by_k);
}

// The most packets an interior NIC held at once: Kesavan and Panda §3.3 compares the buffering of the
// nodes that forward (the root's send buffers hold the message either way).
std::size_t forwarder_peak(const sim::BcastResult& r, Rank root) {
    std::size_t peak = 0;
    for (Rank v = 0; v < static_cast<Rank>(r.peak_buffers.size()); ++v) {
        if (v != root) peak = std::max(peak, r.peak_buffers[v]);
    }
    return peak;
}

// Kesavan and Panda §3.3: FPFS never needs more NIC buffers than FCFS.
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
    claim("Kesavan and Panda §3.3: peak buffers of a forwarding NIC, FPFS <= FCFS (64 nodes, 3 trees, m = 4..64)",
          "FPFS <= FCFS", detail, ok);
}

// Bhoedjang et al. Fig. 4 and Fig. 6 (left) with lfc-myrinet and binomial trees.
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
        within("Bhoedjang et al. Fig. 4: empty multicast latency, " + std::to_string(nodes) + " nodes", paper,
               bcast(spec).latency_us, 0.25, "us");
        if (nodes == 4) calibrated_on_it("lfc-myrinet tnr");
    }
    within("Bhoedjang et al. Fig. 4: peak throughput, 4 nodes", 42.9, peak_throughput(4, "binomial"), 0.25, "MB/s");
    calibrated_on_it("lfc-myrinet tns");
    const double binomial = peak_throughput(61, "binomial");
    within("Bhoedjang et al. Fig. 4: peak throughput, 61 nodes", 13.3, binomial, 0.25, "MB/s");
    if (plotting) {
        sim::Series latency = ours("ours", {}, {}), throughput = ours("ours", {}, {});
        for (const int nodes : {2, 4, 8, 16, 32, 61}) {
            latency.x.push_back(nodes);
            latency.y.push_back(bcast(preset_spec("lfc-myrinet", nodes)).latency_us);
            throughput.x.push_back(nodes);
            throughput.y.push_back(nodes == 61 ? binomial : peak_throughput(nodes, "binomial"));
        }
        figures.push_back({"bhoedjang-fig4-latency",
                           "Bhoedjang et al. Fig. 4: empty multicast latency, binomial trees",
                           "nodes", "latency (us)", false, false, {},
                           {latency, paper("paper", {4, 61}, {22.0, 59.0})}});
        figures.push_back({"bhoedjang-fig4-throughput",
                           "Bhoedjang et al. Fig. 4: peak multicast throughput, binomial trees",
                           "nodes", "throughput (MB/s)", false, false, {},
                           {throughput, paper("paper", {4, 61}, {42.9, 13.3})}});
    }
    const double chain = peak_throughput(61, "chain");
    const double binary = peak_throughput(61, "binary");
    figures.push_back({"bhoedjang-fig6-left",
                       "Bhoedjang et al. Fig. 6 (left): one sender, 61 nodes (paper: chain highest)",
                       "multicast tree", "peak throughput (MB/s)", false, false,
                       {"chain", "binary", "binomial"},
                       {ours("ours", {1, 2, 3}, {chain, binary, binomial})}});
    claim("Bhoedjang et al. Fig. 6 (left): 61 nodes, chain above binary and binomial", "chain > binary, binomial",
          fmt("%.1f", chain) + " > " + fmt("%.1f", binary) + ", " + fmt("%.1f MB/s", binomial),
          chain > binary && chain > binomial);
}

// Bhoedjang et al. §5.2: deadlock recovery. Table 1 and Fig. 6 (right): all-to-all, 64 KB, 61 nodes,
// four messages per node so that the counts are those of a steady blast rather than of its start.
sim::AlltoallResult alltoall(const char* tree) {
    sim::AlltoallSpec spec;
    spec.model = sim::preset_model(*sim::find_preset("lfc-myrinet"));
    spec.model.nodes = 61;
    spec.model.deadlock_recovery = 1;
    spec.bytes = 65536;
    spec.messages = 4;
    spec.tree = tree;
    std::string why;
    return must(sim::run_alltoall(spec, nullptr, &why), why);
}

std::string table1_cell(const sim::AlltoallResult& r) {
    return fmt("%.3f", r.recoveries_per_multicast) + " / " + fmt("%.1f", r.recovery_packets_per_multicast);
}

void table1_fig6_right() {
    const sim::AlltoallResult binomial = alltoall("binomial");
    const sim::AlltoallResult binary = alltoall("binary");
    const sim::AlltoallResult chain = alltoall("chain");
    const double recoveries = chain.recoveries_per_multicast;
    figures.push_back({"bhoedjang-table1",
                       "Bhoedjang et al. Table 1: all-to-all, 61 nodes, deadlock recoveries",
                       "multicast tree", "recoveries per multicast", false, false,
                       {"chain", "binary", "binomial"},
                       {ours("ours", {1, 2, 3},
                             {chain.recoveries_per_multicast, binary.recoveries_per_multicast,
                              binomial.recoveries_per_multicast}),
                        paper("paper", {1, 2, 3}, {1.000, 0.362, 0.853})}});
    rows.push_back({"Bhoedjang et al. Table 1 (lfc-myrinet, all-to-all, 4 x 64 KB, 61 nodes): chain, recoveries per multicast",
                    "1.000", fmt("%.3f", recoveries), recoveries, std::fabs(recoveries - 1) <= 0.15, ""});
    within("Bhoedjang et al. Table 1: chain, recovery packets per multicast (about N-2)", 59.9,
           chain.recovery_packets_per_multicast, 0.15, "");
    const bool fewer = binary.recoveries_per_multicast < binomial.recoveries_per_multicast &&
                       binary.recovery_packets_per_multicast < binomial.recovery_packets_per_multicast;
    // The binary tree is numbered breadth-first (plan/tree_binary.cc says why).
    claim("Bhoedjang et al. Table 1: binary recovers less often and with fewer packets than binomial "
          "(recoveries / packets per multicast)",
          "0.362 / 2.7 < 0.853 / 3.5", table1_cell(binary) + " vs " + table1_cell(binomial), fewer);
    figures.push_back({"bhoedjang-fig6-right",
                       "Bhoedjang et al. Fig. 6 (right): all-to-all, 61 nodes (paper: binomial > binary > chain)",
                       "multicast tree", "per-sender throughput (MB/s)", false, false,
                       {"chain", "binary", "binomial"},
                       {ours("ours", {1, 2, 3},
                             {chain.per_sender_mbs, binary.per_sender_mbs, binomial.per_sender_mbs})}});
    claim("Bhoedjang et al. Fig. 6 (right): all-to-all per-sender throughput, binomial > binary > chain",
          "binomial > binary > chain",
          fmt("%.2f", binomial.per_sender_mbs) + " > " + fmt("%.2f", binary.per_sender_mbs) + " > " +
              fmt("%.2f MB/s", chain.per_sender_mbs),
          binomial.per_sender_mbs > binary.per_sender_mbs && binary.per_sender_mbs > chain.per_sender_mbs);
}

// Fig. 5: binomial tree, one sender, 61 nodes, receive buffer space fixed at 0.5 MB (8 x 1 KB
// per sender): peak throughput with deadlock recovery (DR) against the basic protocol (BP).
void fig5() {
    sim::Series with_recovery = ours("ours, deadlock recovery (DR)", {}, {});
    sim::Series basic = ours("ours, basic protocol (BP)", {}, {});
    for (const auto& [mtu, credits] : {std::pair{512, 16}, std::pair{1024, 8}, std::pair{2048, 4}}) {
        double peak[2] = {0, 0};
        double started = 0;  // with recovery, at the peak: multicast packets that started one
        double channel = 0;  // ...and packets per multicast sent in a deadlock channel
        for (const int recovery : {0, 1}) {
            for (const std::uint64_t bytes : {1024u, 16384u, 65536u, 262144u}) {
                sim::BcastSpec spec = preset_spec("lfc-myrinet", 61);
                spec.model.mtu = mtu;
                spec.model.credits = credits;
                spec.model.low_water = credits / 2;
                spec.model.deadlock_recovery = recovery;
                spec.bytes = bytes;
                spec.messages = static_cast<int>(std::max<std::uint64_t>(16, (2u << 20) / bytes));
                const sim::BcastResult r = bcast(spec);
                if (r.throughput_mbs <= peak[recovery]) continue;
                peak[recovery] = r.throughput_mbs;
                if (recovery == 0) continue;
                // Each multicast packet is sent 60 times, once to every other node.
                started = static_cast<double>(r.recovery_starters) * 60 / r.totals.data_sent;
                channel = static_cast<double>(r.totals.recovery_packets) * 60 / r.totals.data_sent;
            }
        }
        const double ratio = peak[1] / peak[0];
        with_recovery.x.push_back(mtu);
        with_recovery.y.push_back(peak[1]);
        basic.x.push_back(mtu);
        basic.y.push_back(peak[0]);
        rows.push_back({"Bhoedjang et al. Fig. 5 (binomial, one sender, 61 nodes): peak throughput, DR / BP, " +
                            std::to_string(mtu) + "-byte packets",
                        "within 15 %",
                        fmt("%.2f", peak[1]) + " / " + fmt("%.2f MB/s", peak[0]) + fmt(" (%.2f recover)", started),
                        ratio,
                        std::fabs(ratio - 1) <= 0.15, ""});
        if (mtu != 1024) continue;
        rows.push_back({"Bhoedjang et al. §5.2 (Fig. 5, 1 KB packets): multicasts that start a recovery", "almost 25 %",
                        fmt("%.1f %%", started * 100), started / 0.25, std::fabs(started / 0.25 - 1) <= 0.25, ""});
        known_gap(
            "Bhoedjang et al. §5.2 (Fig. 5, 1 KB packets): packets per multicast in a deadlock channel",
            "1.3 of 60", fmt("%.2f of 60", channel), std::fabs(channel / 1.3 - 1) <= 0.25,
            "ours flags about 2.8 packets per recovery against the paper's 5.2 (1.3 / 0.25): the "
            "deadlocked subtrees are smaller in the model. Counting the acknowledgements too (one "
            "per flagged packet) would give 5.6, but Table 1's chain (59.9 for 60 tree edges) "
            "rules that counting out; not analysed further");
    }
    figures.push_back({"bhoedjang-fig5",
                       "Bhoedjang et al. Fig. 5: peak throughput with and without deadlock recovery "
                       "(paper: within 15 %)",
                       "packet bytes (window 16, 8, 4)", "throughput (MB/s)", true, false, {},
                       {with_recovery, basic}});
}

// Bhoedjang et al. §5.3, Fig. 7-8: LFC against FM/MC with equal 256-byte packets and binary trees (LFC
// with deadlock recovery on, as the paper runs it). Single sender: peak over message sizes.
double lfc_256(int nodes, bool all) {
    double best = 0;
    for (const std::uint64_t bytes : all ? std::vector<std::uint64_t>{65536} : std::vector<std::uint64_t>{4096, 16384, 65536}) {
        sim::Model model = sim::preset_model(*sim::find_preset("lfc-myrinet"));
        model.nodes = nodes;
        model.mtu = 256;
        model.deadlock_recovery = 1;
        if (all) {
            sim::AlltoallSpec spec;
            spec.model = model;
            spec.bytes = bytes;
            spec.tree = "binary";
            std::string why;
            best = std::max(best, must(sim::run_alltoall(spec, nullptr, &why), why).per_sender_mbs);
            continue;
        }
        sim::BcastSpec spec;
        spec.model = model;
        spec.bytes = bytes;
        spec.tree = "binary";
        spec.messages = static_cast<int>(std::max<std::uint64_t>(16, (2u << 20) / bytes));
        best = std::max(best, bcast(spec).throughput_mbs);
    }
    return best;
}

double fmmc(int nodes, bool all) {
    double best = 0;
    for (const std::uint64_t bytes : all ? std::vector<std::uint64_t>{65536} : std::vector<std::uint64_t>{4096, 16384, 65536}) {
        sim::FmmcSpec spec;
        spec.model = sim::preset_model(*sim::find_preset("lfc-myrinet"));
        spec.model.nodes = nodes;
        spec.bytes = bytes;
        spec.all_senders = all;
        spec.messages = all ? 1 : static_cast<int>(std::max<std::uint64_t>(16, (2u << 20) / bytes));
        std::string why;
        best = std::max(best, must(sim::run_fmmc(spec, &why), why).per_sender_mbs);
    }
    return best;
}

void fig7_fig8() {
    within("Bhoedjang et al. §5.3: FM/MC peak multicast throughput, 61 nodes (its pool is calibrated to it)", 7.7,
           fmmc(61, false), 0.15, "MB/s");
    calibrated_on_it("FM/MC host_buffers, its credit pool");
    for (const bool all : {false, true}) {
        const std::string fig = all ? "Bhoedjang et al. Fig. 8 (all-to-all, 64 KB, per sender)" : "Bhoedjang et al. Fig. 7 (one sender, peak)";
        sim::Series lfc_line = ours("ours, LFC", {}, {}), fm_line = ours("ours, FM/MC", {}, {});
        for (const int nodes : {8, 16, 32, 61}) {
            const double lfc = lfc_256(nodes, all);
            const double fm = fmmc(nodes, all);
            lfc_line.x.push_back(nodes);
            lfc_line.y.push_back(lfc);
            fm_line.x.push_back(nodes);
            fm_line.y.push_back(fm);
            const std::string ours = "LFC " + fmt("%.2f", lfc) + ", FM/MC " + fmt("%.2f MB/s", fm);
            // All-to-all on 8 and 16 nodes: the paper's FM/MC keeps up with LFC there, which
            // it puts down to LFC's per-packet overheads (§5.3); in the model LFC's all-to-all
            // on the binary tree wins by 1.4-1.7x (the issue allows either at 8 nodes).
            const std::string small_gap =
                "the model's LFC recovers on few packets with the breadth-first binary tree, and its "
                "per-packet costs (calibrated on lfc-myrinet's single-sender rows) do not cost it "
                "the lead FM/MC had in the paper; with the tree numbered pre-order, LFC deadlocked "
                "and FM/MC won here for that reason instead (README, known gaps)";
            if (nodes >= 32) {
                claim(fig + ": 256-byte packets, binary trees, " + std::to_string(nodes) + " nodes", "LFC > FM/MC", ours, lfc > fm);
            } else if (nodes == 8) {
                known_gap(fig + ": 256-byte packets, binary trees, 8 nodes", "FM/MC > LFC", ours, fm > lfc,
                          small_gap);
            } else {
                const bool ok = all ? std::fabs(fm / lfc - 1) <= 0.3 : fm > lfc;
                rows.push_back({fig + ": 256-byte packets, binary trees, 16 nodes (FM/MC / LFC)",
                                all ? "about equal" : "FM/MC peak better", ours, fm / lfc, ok,
                                ok ? "" : small_gap});
            }
        }
        std::vector<sim::Series> lines = {lfc_line, fm_line};
        if (!all) lines.push_back(paper("paper: FM/MC at 61 nodes", {61}, {7.7}));
        figures.push_back({all ? "bhoedjang-fig8" : "bhoedjang-fig7",
                           fig + ", 256-byte packets, binary trees" +
                               (all ? " (paper: FM/MC close at 8-16 nodes, LFC ahead from 32)"
                                    : " (paper: FM/MC ahead at 8-16 nodes, LFC from 32)"),
                           "nodes", "throughput (MB/s)", false, false, {}, lines});
    }
}

// Yu et al. on gm-lanai9.
sim::CollectiveResult allgather(const std::string& algorithm, Rank nodes, std::uint64_t bytes,
                                double loss = 0, double skew_us = 0, bool payloads = false,
                                int gm_recv_buffers = 0) {
    sim::CollectiveSpec spec;
    spec.model = sim::preset_model(*sim::find_preset("gm-lanai9"));
    if (gm_recv_buffers > 0) spec.model.gm_recv_buffers = gm_recv_buffers;
    spec.model.nodes = nodes;
    spec.algorithm = algorithm;
    spec.bytes = bytes;
    spec.loss = loss;
    spec.skew_us = skew_us;
    spec.payloads = payloads;
    if (skew_us > 0) spec.model.nack_timeout = 5 * skew_us;  // the others wait without asking
    std::string why;
    auto r = sim::run_allgather(spec, nullptr, &why);
    return must(std::move(r), why);
}

double latency(const std::string& algorithm, Rank nodes, std::uint64_t bytes) {
    return allgather(algorithm, nodes, bytes).latency_us;
}

// Fig. 6-8: 16 nodes, latency by size, and the factor of improvement over host-based.
void yu_fig6_to_8() {
    const double rd = latency("rd", 16, 4), ab = latency("ab", 16, 4), hb = latency("host-rd", 16, 4);
    claim("Yu et al. Fig. 6-8 (gm-lanai9, 16 nodes): 4 B, NIC RD fastest, factor over HB",
          "1.54x (issue: >= 1.3x)",
          fmt("%.2fx", hb / rd) + fmt(" (RD %.1f,", rd) + fmt(" AB %.1f,", ab) + fmt(" HB %.1f us)", hb),
          rd < ab && rd < hb && hb / rd >= 1.3);
    // Large messages: the best factor of AB over HB from 8 KB to 64 KB.
    double best = 0, ab_best = 0;
    std::uint64_t best_bytes = 0;
    bool ab_fastest = true;
    sim::Series factor = ours("ours", {4}, {hb / std::min(rd, ab)});
    for (std::uint64_t bytes = 8192; bytes <= 65536; bytes *= 2) {
        const double a = latency("ab", 16, bytes), r = latency("rd", 16, bytes), h = latency("host-rd", 16, bytes);
        factor.x.push_back(static_cast<double>(bytes));
        factor.y.push_back(h / std::min(a, r));
        ab_fastest = ab_fastest && a < r && a < h;
        if (h / a > best) {
            best = h / a;
            ab_best = a;
            best_bytes = bytes;
        }
    }
    claim("Yu et al. Fig. 6: 8-64 KB, NIC AB fastest", "AB fastest", ab_fastest ? "AB fastest" : "not AB",
          ab_fastest);
    figures.push_back({"yu-fig8",
                       "Yu et al. Fig. 8: NIC-based allgather over host-based, 16 nodes",
                       "block bytes", "factor (host-based / best NIC-based)", true, false, {},
                       {factor, paper("paper (3.01x: best of 8-64 KB)", {4, 65536}, {1.54, 3.01})}});
    // HB runs over GM's protocol (p2p_flow=gm): its receivers' two buffers overflow and GM sends
    // again. The factor hangs on that count: with a third buffer nothing is lost (README).
    const double hb3 = allgather("host-rd", 16, best_bytes, 0, 0, false, 3).latency_us;
    rows.push_back({"Yu et al. Fig. 8: best factor of AB over HB, 8-64 KB", "3.01x (issue: >= 2.4x)",
                    fmt("%.2fx", best) + " at " + std::to_string(best_bytes) + " B" +
                        fmt(" (%.2fx with 3 GM receive buffers)", hb3 / ab_best),
                    best / 3.01, best >= 2.4, ""});
    // The RD/AB crossover: RD wins while its combined transfers are few packets.
    std::uint64_t crossover = 0;
    bool ab_after = true;
    for (std::uint64_t bytes = 4; bytes <= 65536; bytes *= 2) {
        const bool ab_wins = latency("ab", 16, bytes) < latency("rd", 16, bytes);
        if (ab_wins && crossover == 0) crossover = bytes;
        if (crossover != 0) ab_after = ab_after && ab_wins;
    }
    claim("Yu et al. Fig. 6: RD/AB crossover between single- and multi-packet sizes (MTU 4 KB)",
          "4 B < crossover <= 4 KB", "AB from " + std::to_string(crossover) + " B on",
          ab_after && crossover > 4 && crossover <= 4096);
}

// Fig. 9: 4 to 1024 nodes, 4 B and 8 KB; the order of the lines at the large end.
void yu_fig9() {
    for (const std::uint64_t bytes : {std::uint64_t{4}, std::uint64_t{8192}}) {
        const double rd = latency("rd", 1024, bytes);
        const double ab = latency("ab", 1024, bytes);
        const double hb = latency("host-rd", 1024, bytes);
        if (plotting) {
            sim::Figure f{"yu-fig9-" + std::to_string(bytes),
                            "Yu et al. Fig. 9: allgather of " + std::to_string(bytes) +
                                " B blocks (the paper gives the order of the lines)",
                            "nodes", "latency (us)", true, true, {}, {}};
            for (const char* a : {"rd", "ab", "host-rd"}) {
                sim::Series line = ours(std::string("ours, ") + a, {}, {});
                for (const Rank n : {4, 16, 64, 256, 1024}) {
                    line.x.push_back(n);
                    line.y.push_back(n == 1024 ? (a[0] == 'r' ? rd : a[0] == 'a' ? ab : hb)
                                               : latency(a, n, bytes));
                }
                f.series.push_back(line);
            }
            figures.push_back(f);
        }
        const std::string ours =
            fmt("at 1024 nodes: RD %.0f,", rd) + fmt(" AB %.0f,", ab) + fmt(" HB %.0f us", hb);
        if (bytes == 4) {
            claim("Yu et al. Fig. 9(a): 4 B, 4-1024 nodes, RD scales best and AB worst", "RD < HB < AB",
                  ours, rd < hb && hb < ab);
        } else {
            claim("Yu et al. Fig. 9(b): 8 KB, 4-1024 nodes, AB scales best", "AB < RD, HB", ours,
                  ab < rd && ab < hb);
        }
    }
}

// Fig. 10: host CPU time, NIC-based flat, host-based growing. AB's small blocks are the
// exception the paper notes: they reach the host through the staging buffer, and the host copies
// them out.
void yu_fig10() {
    double least = 1e300, most = 0;
    for (const Rank n : {4, 16, 64, 256}) {
        for (const std::uint64_t bytes : {std::uint64_t{4}, std::uint64_t{8192}}) {
            for (const char* algorithm : {"rd", "ab"}) {
                if (algorithm == std::string("ab") && bytes <= 64) continue;
                for (const double cpu : allgather(algorithm, n, bytes).host_cpu_us) {
                    least = std::min(least, cpu);
                    most = std::max(most, cpu);
                }
            }
        }
    }
    claim("Yu et al. Fig. 10: NIC-based host CPU flat over 4-256 nodes and 4 B-8 KB", "flat",
          fmt("%.2f", least) + fmt("-%.2f us", most), most <= 1.1 * least);
    const double ab_small = allgather("ab", 16, 4).host_cpu_us[0];
    const double rd_small = allgather("rd", 16, 4).host_cpu_us[0];
    claim("Yu et al. Fig. 10: AB small blocks cost more host CPU (staging copy), 16 nodes, 4 B",
          "AB > RD", fmt("AB %.2f", ab_small) + fmt(", RD %.2f us", rd_small), ab_small > rd_small);
    const double hb_small = allgather("host-rd", 4, 4).host_cpu_us[0];
    const double hb_large = allgather("host-rd", 256, 8192).host_cpu_us[0];
    if (plotting) {
        sim::Figure f{"yu-fig10", "Yu et al. Fig. 10: host CPU time of one 8 KB allgather (paper: NIC-based flat)",
                      "nodes", "host CPU (us)", true, true, {}, {}};
        for (const char* a : {"rd", "ab", "host-rd"}) {
            sim::Series line = ours(std::string("ours, ") + a, {}, {});
            for (const Rank n : {4, 16, 64, 256}) {
                line.x.push_back(n);
                line.y.push_back(allgather(a, n, 8192).host_cpu_us[0]);
            }
            f.series.push_back(line);
        }
        figures.push_back(f);
    }
    claim("Yu et al. Fig. 10: host-based host CPU grows", "grows",
          fmt("%.1f us (4 nodes, 4 B) to ", hb_small) + fmt("%.0f us (256 nodes, 8 KB)", hb_large),
          hb_large > 10 * hb_small);
}

// Receiver-driven reliability (Yu et al. §4.3.1).
void yu_reliability() {
    for (const double loss : {0.01, 0.05}) {
        std::uint64_t nacks = 0, lost = 0;
        for (const char* algorithm : {"rd", "ab"}) {
            for (const Rank n : {16, 61}) {
                const sim::CollectiveResult r = allgather(algorithm, n, 5000, loss, 0, true);
                nacks += r.stats.nacks_sent;
                lost += r.lost;
            }
        }
        claim("Yu et al. §4.3.1: " + fmt("%.0f", loss * 100) + " % loss, RD and AB on 16 and 61 nodes, 5000 B",
              "completes, every byte right",
              std::to_string(lost) + " lost, " + std::to_string(nacks) + " NACKs, all bytes right",
              lost > 0 && nacks > 0);
    }
    std::uint64_t control = 0;
    for (const char* algorithm : {"rd", "ab"}) {
        for (const std::uint64_t bytes : {std::uint64_t{4}, std::uint64_t{8192}}) {
            const sim::CollectiveResult r = allgather(algorithm, 16, bytes);
            control += r.stats.nacks_sent + r.stats.nacks_forwarded + r.stats.retransmitted;
        }
    }
    claim("Yu et al. §4.3.1: no loss, no acknowledgement or NACK", "none",
          std::to_string(control) + " NACKs or resends", control == 0);
    std::uint64_t dropped = 0, resent = 0;
    bool late = true;
    for (const char* algorithm : {"rd", "ab"}) {
        const sim::CollectiveResult r = allgather(algorithm, 16, 8192, 0, 1000, true);
        dropped += r.stats.early_dropped;
        resent += r.stats.retransmitted;
        late = late && r.latency_us > 1000;
    }
    claim("Yu et al. §4.2: one host 1 ms late (RD, AB, 16 nodes, 8 KB)", "nothing lost, completes",
          std::to_string(dropped) + " dropped, " + std::to_string(resent) + " resent", dropped == 0 && resent == 0 && late);
}


// Coll et al.: hardware-based multicast trees.

std::string depths_text(const std::map<int, int>& depths, int trials) {
    std::string out;
    for (const auto& [d, count] : depths) {
        out += (out.empty() ? "" : ", ") + std::to_string(d) + fmt("/%.3f", static_cast<double>(count) / trials);
    }
    return out;
}

// The depths of trees over `trials` random maps with `percent` % of `nodes` faulty and a random
// live source: the greedy tree's, which equals the optimum at 2 (faults in the middle leave two or
// more groups, which one step cannot reach); where greedy needs more, the backtracking search's
// best within 500 calls, still an upper bound on the optimum.
std::map<int, int> table1_cell(Rank nodes, double percent, int trials) {
    const plan::FatTree net = plan::FatTree::holding(nodes);
    sim::Rng rng(static_cast<std::uint64_t>(nodes) * 1000 + static_cast<std::uint64_t>(percent * 10), 0x7a1);
    std::map<int, int> depths;
    const auto count = static_cast<std::int64_t>(std::llround(percent / 100 * nodes));
    for (int t = 0; t < trials; ++t) {
        const auto source = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(nodes)));
        const auto faults = sim::random_faults(nodes, count, source, rng);
        const auto groups = plan::live_groups(nodes, faults);
        int depth = plan::greedy_hw_tree(net, source, groups).depth();
        if (depth > 2) depth = plan::optimal_hw_tree(net, source, groups, 500).tree.depth();
        ++depths[depth];
    }
    return depths;
}

void coll_examples() {
    const plan::FatTree net = plan::FatTree::holding(16);
    const std::vector<plan::NodeRange> fig4{{0, 0}, {2, 5}, {7, 15}};
    const auto o = plan::first_backward_overlap(net, std::vector<plan::NodeRange>{{2, 5}, {7, 15}});
    const plan::HwTree greedy = plan::greedy_hw_tree(net, 8, fig4);
    const plan::HwTree optimal = plan::optimal_hw_tree(net, 8, fig4, 100000).tree;
    claim("Coll et al. Fig. 4: 16 nodes, source 8, [0,0] [2,5] [7,15]: backward overlap level, steps",
          "level 1; 2 steps, 8 -> [7,15] first",
          "level " + std::to_string(o ? o->level : -1) + "; " + std::to_string(greedy.depth()) + " steps (optimal " +
              std::to_string(optimal.depth()) + "), 8 -> [" + std::to_string(greedy.steps[0][0].dest.lo) + "," +
              std::to_string(greedy.steps[0][0].dest.hi) + "] first",
          o && o->level == 1 && greedy.depth() == 2 && optimal.depth() == 2 &&
              greedy.steps[0][0].dest == plan::NodeRange{7, 15});
    const std::vector<plan::NodeRange> sources{{0, 0}, {2, 2}}, groups{{3, 7}, {9, 12}};
    const plan::LevelCounts c = plan::capabilities(net, sources), n = plan::needs(net, groups);
    const plan::LevelCounts d = plan::differences(c, n);
    const auto text = [](const plan::LevelCounts& v) {
        return "(" + std::to_string(v[1]) + "," + std::to_string(v[0]) + ")";
    };
    claim("Coll et al. Fig. 5: sources {0,2}, groups [3,7] [9,12]: c, n, d, overlap level",
          "c=(1,1) n=(2,0) d=(-1,1), level 1",
          "c=" + text(c) + " n=" + text(n) + " d=" + text(d) + ", level " + std::to_string(plan::forward_overlap_level(d)),
          c == plan::LevelCounts{1, 1} && n == plan::LevelCounts{0, 2} && d == plan::LevelCounts{1, -1} &&
              plan::forward_overlap_level(d) == 1);
}

void coll_table1(bool full) {
    sim::Figure f{"coll-table1", "Coll et al. Table 1: maps whose tree needs 3 steps (1000 maps)",
                    "faulty nodes (%)", "fraction of maps", false, false, {}, {}};
    for (const Rank nodes : {1024, 2048, 4096}) {
        if (nodes > 1024 && !full) continue;
        sim::Series line = ours("ours, " + std::to_string(nodes) + " nodes", {}, {});
        for (const double percent : {0.2, 0.4, 0.6, 0.8, 1.0}) {
            const std::map<int, int> depths = table1_cell(nodes, percent, 1000);
            line.x.push_back(percent);
            line.y.push_back(1.0 - (depths.count(2) ? depths.at(2) / 1000.0 : 0.0));
            const std::string what = "Coll et al. Table 1: " + std::to_string(nodes) + " nodes, " + fmt("%.1f", percent) +
                                     " % faulty, 1000 maps: steps/fraction";
            const bool two_always = depths.size() == 1 && depths.begin()->first == 2;
            if (nodes < 4096) {
                claim(what, "2/1.000", depths_text(depths, 1000), two_always);
            } else if (percent <= 0.6) {
                known_gap(what, "2/1.000", depths_text(depths, 1000), two_always,
                          "a map where neither greedy nor 500 calls of backtracking find 2 steps; the "
                          "optimum may still be 2");
            } else if (percent < 1.0) {
                claim(what, "2/0.998, 3/0.002", depths_text(depths, 1000), depths.count(2) && depths.at(2) >= 950);
            } else {
                const double three = depths.count(3) ? depths.at(3) / 1000.0 : 0;
                known_gap(what, "2/0.582, 3/0.418 (issue: 3 in 0.30..0.55)", depths_text(depths, 1000),
                          three >= 0.30 && three <= 0.55,
                          "2-step trees that pass Eq. 1-3 exist in the other maps; no reading of Coll et al. "
                          "tried (fault counts, source, split choices, list handling, capabilities: README) "
                          "gives 0.30-0.55 here and 2 in >= 0.95 at 0.8 %: the paper's 200-fold jump from 33 "
                          "to 41 faults needs a cost per group that its rules do not charge");
            }
        }
        f.series.push_back(line);
    }
    f.series.push_back(paper("paper, 1024 and 2048 nodes", {0.2, 0.4, 0.6, 0.8, 1.0}, {0, 0, 0, 0, 0}));
    f.series.push_back(paper("paper, 4096 nodes", {0.2, 0.4, 0.6, 0.8, 1.0}, {0, 0, 0, 0.002, 0.418}));
    figures.push_back(f);
}

// §6: greedy as shallow as backtracking; counted over the maps backtracking decides within its
// budget of recursive calls.
void coll_greedy_vs_optimal(bool full) {
    int decided = 0, same = 0, all = 0, decided_low = 0, same_low = 0;
    const std::vector<Rank> sizes = full ? std::vector<Rank>{16, 64, 256, 1024, 4096} : std::vector<Rank>{16, 64, 256};
    for (const Rank nodes : sizes) {
        const plan::FatTree net = plan::FatTree::holding(nodes);
        for (const double percent : {0.1, 0.5, 1.0, 5.0, 10.0}) {
            const auto count = static_cast<std::int64_t>(std::llround(percent / 100 * nodes));
            if (count == 0) continue;
            sim::Rng rng(static_cast<std::uint64_t>(nodes) * 7 + static_cast<std::uint64_t>(percent * 10), 0x6c3);
            const int trials = nodes >= 1024 ? 20 : 100;
            for (int t = 0; t < trials; ++t) {
                const auto source = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(nodes)));
                const auto groups = plan::live_groups(nodes, sim::random_faults(nodes, count, source, rng));
                const plan::OptimalSearch optimal = plan::optimal_hw_tree(net, source, groups, nodes >= 1024 ? 500 : 5000);
                ++all;
                if (!optimal.decided) continue;
                const bool equal = plan::greedy_hw_tree(net, source, groups).depth() == optimal.tree.depth();
                ++decided;
                same += equal;
                if (percent < 1.0) {
                    ++decided_low;
                    same_low += equal;
                }
            }
        }
    }
    claim("Coll et al. §6: greedy as shallow as backtracking, " + std::to_string(sizes.front()) + "-" +
              std::to_string(sizes.back()) + " nodes, 0.1-10 % faulty (maps backtracking decided)",
          ">= 99 %", fmt("%.1f %%", 100.0 * same / std::max(decided, 1)) + " of " + std::to_string(decided) +
                         " decided (of " + std::to_string(all) + ")",
          decided > 0 && same >= 0.99 * decided);
    claim("Coll et al. §6: the same below 1 % faulty", "100 %",
          fmt("%.1f %%", 100.0 * same_low / std::max(decided_low, 1)) + " of " + std::to_string(decided_low),
          same_low == decided_low);
}

sim::HwCollectiveResult hw(bool barrier, const std::string& tree, std::vector<Rank> faulty, std::uint64_t bytes = 0) {
    sim::HwCollectiveSpec spec;
    spec.model = sim::preset_model(*sim::find_preset("quadrics-elan3"));
    spec.tree = tree;
    spec.faulty = std::move(faulty);
    spec.bytes = bytes;
    std::string why;
    auto r = barrier ? sim::run_hw_barrier(spec, nullptr, &why) : sim::run_hw_bcast(spec, nullptr, &why);
    return must(std::move(r), why);
}

// Fig. 8-10 on quadrics-elan3, 32 nodes, faulty nodes drawn with a fixed seed.
void coll_fig8_to_10() {
    const double hw_none = hw(true, "hardware", {}).latency_us;
    within("Coll et al. Fig. 8: hardware barrier, 32 nodes, none faulty", 4.0, hw_none, 0.25, "us");
    calibrated_on_it("quadrics-elan3 tns, tnr");
    sim::Rng rng(3, 0x8f);
    double worst = 1e300, hw_most = 0, sw_least = 1e300;
    for (int f = 1; f <= 4; ++f) {
        const std::vector<Rank> faulty = sim::random_faults(32, f, 0, rng);
        const double h = hw(true, "hwtree", faulty).latency_us, s = hw(true, "software", faulty).latency_us;
        worst = std::min(worst, s / h);
        hw_most = std::max(hw_most, h);
        sw_least = std::min(sw_least, s);
    }
    within("Coll et al. Fig. 8: hardware-tree barrier, 32 nodes, 1-4 faulty (slowest)", 7.0, hw_most, 0.25, "us");
    within("Coll et al. Fig. 8: software-tree barrier, 32 nodes, 1-4 faulty (fastest)", 15.9, sw_least, 0.25, "us");
    calibrated_on_it("quadrics-elan3 ts, tr (on Fig. 8's software barrier)");
    claim("Coll et al. Fig. 8: hardware tree over software tree, barrier, 1-4 faulty", "about 2.4x (issue: >= 1.8x)",
          fmt("%.2fx at least", worst), worst >= 1.8);
    figures.push_back({"coll-fig8", "Coll et al. Fig. 8: barrier on 32 nodes",
                       "", "latency (us)", false, false,
                       {"hardware, none faulty", "hw tree, 1-4 faulty: slowest",
                        "sw tree, 1-4 faulty: fastest"},
                       {ours("ours", {1, 2, 3}, {hw_none, hw_most, sw_least}),
                        paper("paper", {1, 2, 3}, {4.0, 7.0, 15.9})}});
    const double peak_hw = hw(false, "hardware", {}, 262144).bandwidth_mbs;
    within("Coll et al. Fig. 10: hardware multicast, 256 KB", 306, peak_hw, 0.25, "MB/s");
    calibrated_on_it("quadrics-elan3 dma_bw");
    const std::vector<Rank> two{5, 17};
    const double tree = hw(false, "hwtree", two, 65536).bandwidth_mbs;
    const double soft = hw(false, "software", two, 32768).bandwidth_mbs;
    within("Coll et al. Fig. 10: hardware-tree broadcast, 64 KB, 2 faulty", 124, tree, 0.25, "MB/s");
    within("Coll et al. Fig. 9: software-tree broadcast, 32 KB, 2 faulty", 40, soft, 0.25, "MB/s");
    claim("Coll et al. Fig. 9-10: hardware-tree bandwidth over software tree's (64 KB)", "3.1x (issue: >= 2x)",
          fmt("%.2fx", tree / hw(false, "software", two, 65536).bandwidth_mbs),
          tree >= 2 * hw(false, "software", two, 65536).bandwidth_mbs);
}

// ---- Pakin et al.: Illinois Fast Messages 1.0 --------------------------------------------------

sim::Pt2ptResult fm_run(const sim::FmOptions& fm, int packets) {
    sim::Pt2ptSpec spec;
    spec.model = sim::preset_model(*sim::find_preset("fm-sparc"));
    spec.fm = fm;
    spec.sizes = {16, 32, 64, 128, 256, 512, 1024, 2048};
    spec.packets = packets;
    std::string why;
    auto r = sim::run_pt2pt(spec, &why);
    return must(std::move(r), why);
}

// One cell of a table: within `tolerance` of the paper; outside it, a failure when the cell is a
// target of the issue, otherwise a stated gap.
void cell(const std::string& what, double paper, double ours, const char* unit, bool target, const std::string& gap,
          const std::string& note = "") {
    const double ratio = ours / paper;
    const bool ok = std::fabs(ratio - 1) <= 0.2;
    rows.push_back({what, fmt("%.1f ", paper) + unit, fmt("%.1f ", ours) + unit + note, ratio, ok,
                    ok || target ? "" : gap});
}

// Table 4: each row's design choices run on fm-sparc; t0, r-inf and n-half as Table 2 defines
// them (sim/fm_pt2pt.h: t0 the time per packet extrapolated to an empty one, r-inf its rate at
// the largest sizes, n-half where the measured bandwidth reaches r-inf / 2), with t0 x r-inf
// beside n-half. MB is 2^20 bytes here, as in the paper. Rows 1-2 calibrate the preset's LCP
// costs, row 3 bounds the host's FM_send cost, row 6's t0 less row 4's gives switch()'s cost
// (model.cc); row 5, the full layer, is the target.
void pakin_table4(bool full) {
    constexpr double kMiB = 1.048576;
    const int packets = full ? 65535 : 4096;
    struct Config {
        const char* name;
        sim::FmLoop loop;
        sim::FmIo io;
        bool buffers, flow, interpret;
        double t0, r_inf, n_half;
        const char* role;  // what the row calibrates, or empty
        const char* t0_sets;      // the parameters calibrated on its t0, or empty
        const char* n_half_sets;  // ...on its n-half
        const char* n_gap;  // why n-half misses, where it does
    };
    using sim::FmIo;
    using sim::FmLoop;
    // With the LCP setting the time of small packets, T(n) = t0 + n / 80 MB/s, the bandwidth
    // reaches r-inf / 2 at n = t0 / (2 / r-inf - 1 / 80): the higher r-inf, the later.
    static constexpr const char* kHigherRinf =
        "the model's r-inf is §2's SBus write limit (23.9 MB/s) where the paper measured 21.2-21.9; "
        "half of it is reached later on the LCP's small-packet line: 3.5 us / (2 / r-inf - 1 / link) "
        "gives 52 bytes at ours, 45 at the paper's";
    static constexpr const char* kFlatSwitch =
        "the model's time per packet stays at the receiving LCP's (with switch()) up to about 120 bytes "
        "while the SBus works beside it, so the bandwidth reaches r-inf / 2 at t0 x r-inf / 2; the "
        "paper's rises from t0 to 2 x 127 / r-inf = 11 us at 127 bytes, as if more of the receive "
        "were serial with the size";
    const Config configs[] = {
        {"row 1 baseline LCP, LANai to LANai", FmLoop::baseline, FmIo::none, false, false, false, 4.2, 76.3, 315, "t0 calibrated", "fm-sparc fm_lanai_loop", "", ""},
        {"row 2 streamed LCP, LANai to LANai", FmLoop::streamed, FmIo::none, false, false, false, 3.5, 76.3, 249, "t0 calibrated", "fm-sparc fm_lanai_send, fm_lanai_loop", "", ""},
        {"row 3 streamed + hybrid", FmLoop::streamed, FmIo::hybrid, false, false, false, 3.5, 21.2, 44, "t0 and n-half bound fm_host_send", "fm-sparc fm_host_send (bounded by it)", "fm-sparc fm_host_send (bounded by it)", kHigherRinf},
        {"row 4 + buffer management", FmLoop::streamed, FmIo::hybrid, true, false, false, 3.8, 21.9, 53, "", "", "", kHigherRinf},
        {"row 5 + flow control (the full FM layer)", FmLoop::streamed, FmIo::hybrid, true, true, false, 4.1, 21.4, 54, "", "", "", ""},
        {"row 6 hybrid + buffers + switch()", FmLoop::streamed, FmIo::hybrid, true, false, true, 6.8, 21.8, 127, "t0 less row 4's calibrates switch()", "fm-sparc fm_lanai_switch", "", kFlatSwitch},
        {"row 7 hybrid + buffers + flow + switch()", FmLoop::streamed, FmIo::hybrid, true, true, true, 6.9, 21.7, 127, "", "", "", kFlatSwitch},
        {"row 8 streamed + all-DMA", FmLoop::streamed, FmIo::dma, false, false, false, 7.5, 33.0, 162, "", "", "",
         "follows the model's t0 (above): the bandwidth reaches half of r-inf on the LCP's small-packet line"},
    };
    std::vector<sim::Pt2ptResult> got;
    sim::Series t0_ours = ours("ours", {}, {}), t0_paper = paper("paper", {}, {});
    sim::Figure t0_figure{"pakin-table4-t0", "Pakin et al. Table 4: t0 of each design choice",
                            "Table 4 row", "t0 (us)", false, false, {}, {}};
    for (const Config& c : configs) {
        sim::FmOptions fm;
        fm.loop = c.loop;
        fm.io = c.io;
        fm.buffers = c.buffers;
        fm.flow = c.flow;
        fm.interpret = c.interpret;
        const sim::Pt2ptResult r = fm_run(fm, packets);
        got.push_back(r);
        const bool target = &c == &configs[4];
        const std::string what = std::string("Pakin et al. Table 4 ") + c.name;
        const std::string role = c.role[0] != '\0' ? std::string(" (") + c.role + ")" : "";
        std::string t0_gap = "the model's t0 with switch() is the receiving LCP's time per packet (3.3 us receive, "
                             "0.3 us bookkeeping, 3.0 us switch(), 0.3 us host-DMA setup)";
        if (c.io == FmIo::dma) {
            t0_gap = "the model overlaps the host's copy with the LANai's DMA of the previous packet (three DMA "
                     "engines, §2); the paper's 7.5 us says more of it was serial";
        }
        const sim::Table2Metrics& m = r.metrics;
        const auto row = static_cast<int>(&c - configs) + 1;
        t0_ours.x.push_back(row);
        t0_ours.y.push_back(m.t0_us);
        t0_paper.x.push_back(row);
        t0_paper.y.push_back(c.t0);
        t0_figure.x_ticks.push_back(std::to_string(row));
        cell(what + ": t0" + role, c.t0, m.t0_us, "us", target, t0_gap);
        if (c.t0_sets[0] != '\0') calibrated_on_it(c.t0_sets);
        cell(what + ": r-inf", c.r_inf, m.r_inf_mbs / kMiB, "MB/s", target,
             "the model's r-inf is the SBus limit (§2), not lowered further");
        cell(what + ": n-half", c.n_half, m.n_half, "bytes", target, c.n_gap,
             fmt(" (t0 x r-inf %.0f)", m.n_half_linear));
        if (c.n_half_sets[0] != '\0') calibrated_on_it(c.n_half_sets);
    }
    t0_figure.series = {t0_ours, t0_paper};
    figures.push_back(t0_figure);
    const auto& lbase = got[0];
    const auto& lstream = got[1];
    const auto& hybrid = got[2];
    const auto& buffered = got[3];
    const auto& fmfull = got[4];
    const auto& dma = got[7];
    claim("Pakin et al. Table 4: streamed LCP better than baseline (rows 1-2: t0 and n-half lower)",
          "3.5 < 4.2 us, 249 < 315 bytes",
          fmt("%.2f", lstream.metrics.t0_us) + " < " + fmt("%.2f us, ", lbase.metrics.t0_us) + fmt("%.0f", lstream.metrics.n_half) +
              " < " + fmt("%.0f bytes", lbase.metrics.n_half),
          lstream.metrics.t0_us < lbase.metrics.t0_us && lstream.metrics.n_half < lbase.metrics.n_half);
    claim("Pakin et al. Table 4: hybrid has a lower n-half than all-DMA (rows 3, 8)", "44 < 162 bytes",
          fmt("%.0f", hybrid.metrics.n_half) + " < " + fmt("%.0f bytes", dma.metrics.n_half), hybrid.metrics.n_half < dma.metrics.n_half);
    claim("Pakin et al. Table 4: all-DMA has a higher r-inf than hybrid (rows 3, 8)", "33.0 > 21.2 MB/s",
          fmt("%.1f", dma.metrics.r_inf_mbs / kMiB) + " > " + fmt("%.1f MB/s", hybrid.metrics.r_inf_mbs / kMiB),
          dma.metrics.r_inf_mbs > hybrid.metrics.r_inf_mbs);
    claim("Pakin et al. Table 4: all-DMA has a higher t0 than hybrid (rows 3, 8)", "7.5 > 3.5 us",
          fmt("%.2f", dma.metrics.t0_us) + " > " + fmt("%.2f us", hybrid.metrics.t0_us), dma.metrics.t0_us > hybrid.metrics.t0_us);
    // r-inf is the asymptote, which a cost per packet does not move (rows 4 and 5 both have the
    // SBus limit); what flow control costs shows at finite sizes, as in Fig. 8.
    const auto bw_at = [](const sim::Pt2ptResult& r, std::uint32_t bytes) {
        for (const sim::Pt2ptPoint& p : r.points) {
            if (p.bytes == bytes) return p.bandwidth_mbs;
        }
        return 0.0;
    };
    claim("Pakin et al. §4.5: flow control costs a little bandwidth (rows 4-5; Fig. 8, 128 and 512 bytes)",
          "21.4 < 21.9 MB/s (r-inf); \"moderate loss\"",
          fmt("%.2f", bw_at(fmfull, 128) / kMiB) + fmt(" < %.2f, ", bw_at(buffered, 128) / kMiB) +
              fmt("%.2f", bw_at(fmfull, 512) / kMiB) + fmt(" < %.2f MB/s", bw_at(buffered, 512) / kMiB) +
              fmt(" (r-inf %.1f, ", fmfull.metrics.r_inf_mbs / kMiB) + fmt("%.1f)", buffered.metrics.r_inf_mbs / kMiB),
          bw_at(fmfull, 128) < bw_at(buffered, 128) && bw_at(fmfull, 512) < bw_at(buffered, 512));
    // The same design choices on the full layer, which Table 4 does not list.
    sim::FmOptions full_base;
    full_base.loop = sim::FmLoop::baseline;
    const sim::Pt2ptResult fm_baseline = fm_run(full_base, packets);
    sim::FmOptions full_dma;
    full_dma.io = sim::FmIo::dma;
    const sim::Pt2ptResult fm_dma = fm_run(full_dma, packets);
    // On the full layer the LCP bounds a stream of small packets and the sender's SBus one of
    // large packets, so the loop shows in t0 and in the latency (two LANais per trip).
    const double lat_stream = fmfull.points.front().latency_us;
    const double lat_base = fm_baseline.points.front().latency_us;
    claim("Pakin et al. §4.2-4.3 on the full FM layer: streamed beats baseline (16-byte latency, t0); all-DMA n-half "
          "and r-inf above hybrid's",
          "(not measured in the paper)",
          fmt("%.2f", lat_stream) + fmt(" < %.2f us, ", lat_base) + fmt("t0 %.3f", fmfull.metrics.t0_us) +
              fmt(" <= %.3f us; ", fm_baseline.metrics.t0_us) + fmt("n-half %.0f", fm_dma.metrics.n_half) +
              fmt(" > %.0f; ", fmfull.metrics.n_half) + fmt("r-inf %.1f", fm_dma.metrics.r_inf_mbs / kMiB) +
              fmt(" > %.1f", fmfull.metrics.r_inf_mbs / kMiB),
          lat_stream < lat_base && fmfull.metrics.t0_us <= fm_baseline.metrics.t0_us && fm_dma.metrics.n_half > fmfull.metrics.n_half &&
              fm_dma.metrics.r_inf_mbs > fmfull.metrics.r_inf_mbs);
    // §5 and the abstract: the full layer's latency and bandwidth at a few sizes.
    const auto at = [&](std::uint32_t bytes) {
        for (const sim::Pt2ptPoint& p : fmfull.points) {
            if (p.bytes == bytes) return p;
        }
        return sim::Pt2ptPoint{};
    };
    const std::string lat_gap = "the model's one-way path charges each stage once (host send, PIO, LANai send, "
                                "switch, LANai receive, DMA, extract); Pakin et al. does not break its latency down";
    cell("Pakin et al. §5: full FM one-way latency, 16 bytes", 25, at(16).latency_us, "us", false, lat_gap);
    cell("Pakin et al. §5: full FM one-way latency, 128 bytes", 32, at(128).latency_us, "us", false, lat_gap);
    cell("Pakin et al. §5: full FM bandwidth, 128 bytes", 16.2, at(128).bandwidth_mbs / kMiB, "MB/s", false,
         "the model's small-packet bandwidth follows its t0");
    cell("Pakin et al. §5: full FM bandwidth, 512 bytes", 19.6, at(512).bandwidth_mbs / kMiB, "MB/s", false,
         "the model's large-packet bandwidth follows the SBus limit");
    sim::Series bandwidth = ours("ours, the full FM layer", {}, {});
    for (const sim::Pt2ptPoint& p : fmfull.points) {
        bandwidth.x.push_back(p.bytes);
        bandwidth.y.push_back(p.bandwidth_mbs / kMiB);
    }
    figures.push_back({"pakin-bandwidth", "Pakin et al. §5: FM 1.0 bandwidth against message size",
                       "message bytes", "bandwidth (MB/s, 2^20 B)", true, false, {},
                       {bandwidth, paper("paper (§5)", {128, 512}, {16.2, 19.6})}});
}

}  // namespace
}  // namespace nicsim

int main(int argc, char** argv) {
    using namespace nicsim;
    bool table = false;
    bool full = false;
    std::string plots;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--table") == 0) {
            table = true;
        } else if (std::strcmp(argv[i], "--full") == 0) {
            full = table = true;
        } else if (std::strcmp(argv[i], "--plots") == 0 && i + 1 < argc) {
            plots = argv[++i];
            plotting = true;
        } else {
            std::fprintf(stderr, "nicsim_repro: %s: unknown option (--table, --full, --plots DIR)\n",
                         argv[i]);
            return 2;
        }
    }
    fig12();
    fig14(full ? 10 : 3);
    theorem3_simulated();
    buffers();
    fig4_fig6();
    fig5();
    table1_fig6_right();
    fig7_fig8();
    yu_fig6_to_8();
    yu_fig9();
    yu_fig10();
    yu_reliability();
    coll_examples();
    coll_table1(full);
    coll_greedy_vs_optimal(full);
    coll_fig8_to_10();
    pakin_table4(full);
    for (const sim::Figure& f : plotting ? figures : std::vector<sim::Figure>{}) {
        const std::string path = plots + "/" + f.file + ".svg";
        std::FILE* out = std::fopen(path.c_str(), "w");
        const std::string text = sim::svg(f);
        bool written = out != nullptr && std::fwrite(text.data(), 1, text.size(), out) == text.size();
        if (out != nullptr && std::fclose(out) != 0) written = false;
        if (!written) {
            std::fprintf(stderr, "nicsim_repro: --plots %s: cannot write %s\n", plots.c_str(),
                         path.c_str());
            return 1;
        }
    }
    int failed = 0;
    const auto basis = [](const Row& r) {
        return r.calibrated.empty() ? std::string("predicted") : "calibrated: " + r.calibrated;
    };
    if (table) {
        std::printf("%-90s | %-28s | %-34s | %-5s | %s\n", "result", "paper", "ours", "ratio",
                    "basis");
        int calibrated = 0, reproduced = 0, reproduced_calibrated = 0;
        for (const Row& r : rows) {
            std::printf("%-90s | %-28s | %-34s | %-5s | %s%s\n", r.what.c_str(), r.paper.c_str(),
                        r.ours.c_str(), std::isnan(r.ratio) ? "-" : fmt("%.2f", r.ratio).c_str(),
                        basis(r).c_str(),
                        r.ok ? "" : r.gap.empty() ? "  FAILED" : "  NOT REPRODUCED");
            if (!r.gap.empty()) std::printf("    (%s)\n", r.gap.c_str());
            failed += r.ok || !r.gap.empty() ? 0 : 1;
            calibrated += r.calibrated.empty() ? 0 : 1;
            reproduced += r.ok ? 1 : 0;
            reproduced_calibrated += r.ok && !r.calibrated.empty() ? 1 : 0;
        }
        std::printf("\n%zu rows, %d reproduced: %d predicted (from values the papers give or "
                    "calibrated on other rows), %d on the rows their parameters were calibrated on "
                    "(a consistency check, not a prediction). %zu rows predicted, %d calibrated.\n",
                    rows.size(), reproduced, reproduced - reproduced_calibrated,
                    reproduced_calibrated, rows.size() - static_cast<std::size_t>(calibrated),
                    calibrated);
        return failed == 0 ? 0 : 1;
    }
    std::printf("1..%zu\n", rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::printf("%s %zu - %s: paper %s, ours %s%s [%s]%s\n", r.ok ? "ok" : "not ok", i + 1,
                    r.what.c_str(), r.paper.c_str(), r.ours.c_str(),
                    std::isnan(r.ratio) ? "" : (", ratio " + fmt("%.2f", r.ratio)).c_str(),
                    basis(r).c_str(),
                    r.gap.empty() ? "" : (" # TODO not reproduced: " + r.gap).c_str());
    }
    return 0;
}
