// The nicsim command: the engine's modeled network from the command line. Each subcommand
// declares its options once (kCommands); parsing, --help and the man-page check all read that.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/nicsim.h"
#include "plan/allgather.h"
#include "plan/kbinomial.h"
#include "plan/barrier.h"
#include "sim/bcast.h"
#include "sim/collective.h"
#include "sim/hw_collective.h"
#include "sim/model.h"
#include "sim/plot.h"
#include "sim/simulator.h"
#include "tools/alltoall_cmd.h"
#include "tools/fmmc_cmd.h"
#include "tools/hwtree_cmd.h"
#include "tools/pt2pt_cmd.h"
#include "tools/json.h"
#include "tools/options.h"

namespace nicsim::tools {
namespace {

constexpr int kBadUsage = 2;

// A line on stderr every 10 s of a long simulation, so that a run of hours shows it is alive.
struct Progress {
    std::string_view command;
    std::chrono::steady_clock::time_point start, last;
};
Progress progress;

void report_progress(sim::Time now, std::uint64_t events_run) {
    const auto wall = std::chrono::steady_clock::now();
    if (wall - progress.last < std::chrono::seconds(10)) return;
    progress.last = wall;
    const std::chrono::duration<double> running = wall - progress.start;
    std::fprintf(stderr, "nicsim %.*s: running for %.0f s: %llu events, simulated time %.3f us\n",
                 static_cast<int>(progress.command.size()), progress.command.data(),
                 running.count(), static_cast<unsigned long long>(events_run), sim::to_us(now));
}

// clang-format off
constexpr OptionSpec kPresetOpt{"--preset", "P", "model preset (see nicsim presets); default: the model defaults"};
constexpr OptionSpec kNodesOpt{"--nodes", "N", "nodes in the cluster (default: the preset's)"};
constexpr OptionSpec kSetOpt{"--set", "NAME=VALUE", "set one model parameter (see nicsim params); repeatable", true};
constexpr OptionSpec kBytesOpt{"--bytes", "B", "message length in bytes (default 0)"};
constexpr OptionSpec kTreeOpt{"--tree", "T", "binomial|binary|chain|flat|kbinomial[:K]|optimal (default binomial; optimal, or kbinomial without K: Theorem 3's k under the model's costs); on a fattree network hwtree|software|hardware (default hwtree)"};
constexpr OptionSpec kForwardingOpt{"--forwarding", "F", "fpfs|fcfs|host: NIC forwarding per packet or per child, or host-based (default fpfs)"};
constexpr OptionSpec kRootOpt{"--root", "R", "the broadcasting node (default 0)"};
constexpr OptionSpec kJsonOpt{"--json", "", "print one JSON object instead of text"};
constexpr OptionSpec kTraceOpt{"--trace", "FILE", "write a Chrome trace-event file (Perfetto): one track per host, NIC and link"};
constexpr OptionSpec kHelpOpt{"--help", "", "print this text"};

constexpr std::array kKbinomialOpts = {
    OptionSpec{"--nodes", "N", "multicast set size n (required)"},
    OptionSpec{"--packets", "M", "message length m in packets (default 1)"},
    kJsonOpt, kHelpOpt};
constexpr std::array kBcastOpts = {kPresetOpt, kNodesOpt, kSetOpt, kBytesOpt, kTreeOpt, kForwardingOpt, kRootOpt,
    OptionSpec{"--skew", "US", "one host is busy elsewhere this many microseconds first, as a late process (default 0)"},
    OptionSpec{"--late", "R", "with --skew, the late host (default: drawn with the model's seed)"},
    kProtocolOpt, kFaultyOpt, kFaultyPercentOpt, kPlannerOpt, kDotOpt, kJsonOpt, kTraceOpt, kHelpOpt};
constexpr std::array kThroughputOpts = {kPresetOpt, kNodesOpt, kSetOpt, kBytesOpt, kTreeOpt, kForwardingOpt, kRootOpt, kProtocolOpt,
    OptionSpec{"--messages", "M", "messages in the blast (default: enough for 4 MB, at least 16 and at most 4096)"},
    kJsonOpt, kTraceOpt, kHelpOpt};
constexpr OptionSpec kSkewOpt{"--skew", "US", "one host, drawn with the seed, posts this many microseconds late (default 0)"};
constexpr OptionSpec kSeedOpt{"--seed", "S", "the model's seed (losses, the late host, an irregular topology); default: the model's"};
constexpr std::array kAllgatherOpts = {kPresetOpt, kNodesOpt, kSetOpt,
    OptionSpec{"--bytes", "B", "each node's block in bytes (default 0)"},
    OptionSpec{"--algorithm", "A", "rd|ab|flat|host-rd|host-ring: NIC-based recursive doubling, all-to-all broadcast or flat (each block straight to every node), or a host-based baseline (default rd)"},
    OptionSpec{"--loss", "RATE", "probability that the network loses an allgather packet or NACK (NIC-based only; default 0)"},
    kSkewOpt, kSeedOpt, kJsonOpt, kTraceOpt, kHelpOpt};
constexpr std::array kBarrierOpts = {kPresetOpt, kNodesOpt, kSetOpt,
    OptionSpec{"--algorithm", "A", "nic|host, the one whose node 0 takes the fewest tokens in turn, on the NIC or on the host, or a name from nicsim algorithms, optionally host- prefixed (default nic)"},
    kSkewOpt, kSeedOpt, kHwTreeOpt, kFaultyOpt, kFaultyPercentOpt, kPlannerOpt, kDotOpt,
    OptionSpec{"--root", "R", "on a fattree network: the node that releases the others (default 0)"},
    kJsonOpt, kTraceOpt, kHelpOpt};
constexpr std::array kPt2ptOpts = {kPresetOpt, kSetOpt, kLayerOpt, kIoOpt, kLoopOpt, kBuffersOpt, kFlowOpt,
    kInterpretOpt, kSizesOpt, kPacketsOpt, kRoundTripsOpt, kJsonOpt, kHelpOpt};
constexpr std::array kBenchOpts = {kJsonOpt, kHelpOpt};
constexpr std::array kPlotOpts = {
    OptionSpec{"--out", "FILE", "the SVG file to write (required)"},
    OptionSpec{"--title", "TEXT", "the figure's title"},
    OptionSpec{"--x-label", "TEXT", "the x axis's label"},
    OptionSpec{"--y-label", "TEXT", "the y axis's label"},
    OptionSpec{"--log-x", "", "a logarithmic x axis"},
    OptionSpec{"--log-y", "", "a logarithmic y axis"},
    kHelpOpt};
constexpr std::array kListOpts = {kHelpOpt};
// clang-format on

struct Command {
    std::string_view name;
    std::string_view summary;
    std::span<const OptionSpec> options;
    int (*run)(const Options&);
};

// The model from --preset, --nodes and --set, in that order.
std::optional<sim::Model> model_from(const Options& opts, std::string* why) {
    sim::Model model = sim::default_model();
    if (opts.has("--preset")) {
        const sim::Preset* preset = sim::find_preset(opts.text("--preset"));
        if (preset == nullptr) {
            *why = "--preset " + opts.text("--preset") + ": unknown preset (see nicsim presets)";
            return std::nullopt;
        }
        model = sim::preset_model(*preset);
    }
    if (opts.has("--nodes") && !sim::set_model_param(model, "nodes", opts.text("--nodes"), why)) {
        *why = "--nodes " + opts.text("--nodes") + ": must be an integer from 1 to " +
               std::to_string(static_cast<long long>(sim::find_model_param("nodes")->max));
        return std::nullopt;
    }
    // Each parameter once: a second value (--set mtu=5 --set mtu=6, or --nodes beside --set
    // nodes=) is refused, as a repeated option is, rather than the last one winning.
    std::vector<std::string> set = opts.has("--nodes") ? std::vector<std::string>{"nodes"}
                                                        : std::vector<std::string>{};
    for (const std::string& assignment : opts.all("--set")) {
        const std::string name = assignment.substr(0, assignment.find('='));
        if (std::find(set.begin(), set.end(), name) != set.end()) {
            *why = "--set " + assignment + ": " + name + " is set twice" +
                   (name == "nodes" && opts.has("--nodes") ? " (--nodes sets it too)" : "");
            return std::nullopt;
        }
        set.push_back(name);
        if (!sim::set_model_param(model, assignment, why)) {
            *why = "--set " + *why;
            return std::nullopt;
        }
    }
    if (!sim::check_model(model, why)) return std::nullopt;
    return model;
}

// A bcast spec from the options bcast and throughput share.
std::optional<sim::BcastSpec> spec_from(const Options& opts, std::string* why) {
    auto model = model_from(opts, why);
    if (!model) return std::nullopt;
    sim::BcastSpec spec;
    spec.model = *model;
    const auto bytes = opts.integer("--bytes", 0, 0, std::int64_t{1} << 40, why);
    const auto root = bytes ? opts.integer("--root", 0, 0, model->nodes - 1, why) : std::nullopt;
    const auto skew = root ? opts.number("--skew", 0, 0, 1e9, why) : std::nullopt;
    const auto late = skew ? opts.integer("--late", -1, 0, model->nodes - 1, why) : std::nullopt;
    if (!late) return std::nullopt;
    if (*late >= 0 && *skew == 0) {
        *why = "--late " + std::to_string(*late) + ": only with --skew";
        return std::nullopt;
    }
    spec.bytes = static_cast<std::uint64_t>(*bytes);
    spec.root = static_cast<Rank>(*root);
    spec.skew_us = *skew;
    spec.late = static_cast<Rank>(*late);
    spec.forwarding = opts.text("--forwarding", "fpfs");
    const std::string tree = opts.text("--tree", "binomial");
    const auto colon = tree.find(':');
    spec.tree = tree.substr(0, colon);
    if (colon != std::string::npos) {
        if (spec.tree != "kbinomial") {
            *why = "--tree " + tree + ": only kbinomial takes :K";
            return std::nullopt;
        }
        const std::string digits = tree.substr(colon + 1);
        char* end = nullptr;
        const long v = std::strtol(digits.c_str(), &end, 10);
        const int k_max = std::max(1, plan::ceil_log2(model->nodes));
        if (digits.empty() || *end != '\0' || v < 1 || v > k_max) {
            const std::string range =
                "1.." + std::to_string(k_max) + " for " + std::to_string(model->nodes) + " nodes";
            *why = "--tree " + tree + ": " +
                   (digits.empty() || *end != '\0' ? "k is not a number (" + range + ")"
                                                    : "k out of range " + range);
            return std::nullopt;
        }
        spec.k = static_cast<int>(v);
    }
    return spec;
}

std::unique_ptr<sim::Trace> trace_from(const Options& opts, std::string* why, bool* bad) {
    *bad = false;
    if (!opts.has("--trace")) return nullptr;
    auto trace = sim::Trace::open(opts.text("--trace"), why);
    *bad = trace == nullptr;
    return trace;
}

// Writes out the trace, if any; false, with one line naming the file, when that fails.
bool close_trace(std::string_view command, const Options& opts, sim::Trace* trace) {
    if (trace == nullptr || trace->close()) return true;
    std::fprintf(stderr, "nicsim %.*s: --trace %s: write failed\n",
                 static_cast<int>(command.size()), command.data(), opts.text("--trace").c_str());
    return false;
}

std::string preset_name(const Options& opts) { return opts.text("--preset", "defaults"); }

int run_kbinomial(const Options& opts) {
    std::string why;
    if (!opts.has("--nodes")) return usage_error("kbinomial", "--nodes: required");
    const auto n = opts.integer("--nodes", 0, 1, 1 << 30, &why);
    const auto m = n ? opts.integer("--packets", 1, 1, std::int64_t{1} << 40, &why) : std::nullopt;
    if (!n || !m) return usage_error("kbinomial", why);
    const Rank nodes = static_cast<Rank>(*n);
    const int k_max = std::max(1, plan::ceil_log2(nodes));
    const int best = plan::optimal_k(nodes, *m);
    if (opts.has("--json")) {
        std::string rows = "[";
        for (int k = 1; k <= k_max; ++k) {
            rows += (k == 1 ? "" : ",") +
                    JsonObject()
                        .field("k", static_cast<long long>(k))
                        .field("l1", static_cast<long long>(plan::kbinomial_steps(nodes, k)))
                        .field("total_steps",
                               static_cast<long long>(plan::kbinomial_total_steps(nodes, *m, k)))
                        .str();
        }
        rows += "]";
        std::printf("%s\n", JsonObject()
                                .field("command", "kbinomial")
                                .field("nodes", static_cast<long long>(nodes))
                                .field("packets", static_cast<long long>(*m))
                                .raw("rows", rows)
                                .field("optimal_k", static_cast<long long>(best))
                                .str()
                                .c_str());
        return 0;
    }
    std::printf(
        "k-binomial trees for n = %d nodes and m = %lld packets (Kesavan and Panda Lemma 1, Theorem 3)\n",
        nodes, static_cast<long long>(*m));
    std::printf("%4s %6s %22s\n", "k", "L1", "steps L1 + (m-1)k");
    for (int k = 1; k <= k_max; ++k) {
        std::printf("%4d %6d %22lld%s\n", k, plan::kbinomial_steps(nodes, k),
                    static_cast<long long>(plan::kbinomial_total_steps(nodes, *m, k)),
                    k == best ? "   optimal" : "");
    }
    return 0;
}

// Up to this many nodes the text output lists every node's completion; beyond, a summary.
constexpr std::size_t kPerNodeRows = 64;

std::string per_node(const std::vector<double>& values) {
    std::string out;
    char buf[64];
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%s%5zu:%9.2f", i % 6 == 0 ? (i == 0 ? "  " : "\n  ") : "  ",
                      i, values[i]);
        out += buf;
    }
    return out + "\n";
}

JsonObject common_json(std::string_view command, const Options& opts, const sim::BcastSpec& spec,
                       const sim::BcastResult& r) {
    JsonObject j;
    j.field("command", command)
        .field("preset", preset_name(opts))
        .field("nodes", static_cast<long long>(spec.model.nodes))
        .field("bytes", static_cast<long long>(spec.bytes))
        .field("packets_per_message", static_cast<long long>(r.packets))
        .field("tree", r.tree)
        .field("depth", static_cast<long long>(r.depth))
        .field("forwarding", spec.forwarding)
        .field("root", static_cast<long long>(spec.root));
    return j;
}

JsonObject& counts_json(JsonObject& j, const sim::BcastResult& r) {
    std::size_t peak = 0;
    for (const std::size_t p : r.peak_buffers) peak = std::max(peak, p);
    return j.field("data_packets", static_cast<long long>(r.totals.data_sent))
        .field("credit_packets", static_cast<long long>(r.totals.credit_packets))
        .field("piggybacked_credits", static_cast<long long>(r.totals.piggybacked))
        .field("blocked_sends", static_cast<long long>(r.totals.blocked))
        .field("recoveries", static_cast<long long>(r.totals.recoveries))
        .field("recovery_starters", static_cast<long long>(r.recovery_starters))
        .field("recovery_packets", static_cast<long long>(r.totals.recovery_packets))
        .field("peak_buffers_max", static_cast<long long>(peak))
        .array("peak_buffers", r.peak_buffers)
        .field("events", static_cast<long long>(r.events));
}

void print_counts(const sim::BcastResult& r) {
    std::size_t peak = 0;
    for (const std::size_t p : r.peak_buffers) peak = std::max(peak, p);
    std::printf(
        "packets: %llu data, %llu credit updates, %llu carried credits back, %llu waited for a credit\n",
        static_cast<unsigned long long>(r.totals.data_sent),
        static_cast<unsigned long long>(r.totals.credit_packets),
        static_cast<unsigned long long>(r.totals.piggybacked),
        static_cast<unsigned long long>(r.totals.blocked));
    std::printf("peak NIC buffers: %zu (most any one NIC held at once)\n", peak);
    if (r.totals.recoveries != 0) {
        // Each multicast packet is sent once to every node but the root.
        const double multicasts = static_cast<double>(r.totals.data_sent) /
                                  static_cast<double>(r.peak_buffers.size() - 1);
        std::printf(
            "deadlock recovery: %llu recoveries; %.3f of the multicast packets started one, "
            "%.2f packets per multicast went in a deadlock channel\n",
            static_cast<unsigned long long>(r.totals.recoveries),
            static_cast<double>(r.recovery_starters) / multicasts,
            static_cast<double>(r.totals.recovery_packets) / multicasts);
    }
}

// Options only a fattree network takes, refused elsewhere rather than ignored.
std::optional<std::string> fattree_only(const Options& opts) {
    for (const OptionSpec* o : {&kFaultyOpt, &kFaultyPercentOpt, &kPlannerOpt, &kDotOpt}) {
        if (opts.has(o->name))
            return std::string(o->name) +
                   ": only with the fattree topology (--preset quadrics-elan3)";
    }
    return std::nullopt;
}

int run_experiment(std::string_view command, const Options& opts, bool blast) {
    std::string why;
    const char* late_option = opts.has("--skew")   ? "--skew"
                              : opts.has("--late") ? "--late"
                                                   : nullptr;
    if (const std::string protocol = opts.text("--protocol", "lfc"); protocol != "lfc") {
        if (protocol != "fmmc")
            return usage_error(command, "--protocol " + protocol + ": not one of lfc|fmmc");
        if (late_option != nullptr)
            return usage_error(command, std::string(late_option) + ": only with --protocol lfc");
        const auto model = model_from(opts, &why);
        if (!model) return usage_error(command, why);
        return run_fmmc_command(command, opts, *model);
    }
    if (!blast) {
        const auto model = model_from(opts, &why);
        if (!model) return usage_error(command, why);
        if (model->topology == "fattree") {
            if (late_option != nullptr)
                return usage_error(command,
                                   std::string(late_option) + ": not on the fattree topology");
            return run_hw_collective(command, opts, *model, false);
        }
        if (const auto bad = fattree_only(opts)) return usage_error(command, *bad);
    }
    auto spec = spec_from(opts, &why);
    if (!spec) return usage_error(command, why);
    if (blast) {
        // Enough messages for 4 MB, so large ones reach the steady state, but at most
        // kMaxDefaultMessages: tiny ones reach it within a few windows, and counting bytes alone
        // made --bytes 0 a blast of 4,194,304 messages (about 10 GB at 300 nodes).
        constexpr std::int64_t kMaxDefaultMessages = 4096;
        const std::uint64_t per = std::max<std::uint64_t>(spec->bytes, 1);
        const std::int64_t fallback = std::clamp<std::int64_t>(
            static_cast<std::int64_t>((std::uint64_t{4} << 20) / per), 16, kMaxDefaultMessages);
        const auto messages = opts.integer("--messages", fallback, 1, 1 << 24, &why);
        if (!messages) return usage_error(command, why);
        spec->messages = static_cast<int>(*messages);
    }
    bool bad_trace = false;
    auto trace = trace_from(opts, &why, &bad_trace);
    if (bad_trace) return usage_error(command, why);
    auto result = sim::run_bcast(*spec, trace.get(), &why);
    if (!result) return usage_error(command, why);
    if (!close_trace(command, opts, trace.get())) return 1;
    const sim::BcastResult& r = *result;
    if (opts.has("--json")) {
        JsonObject j = common_json(command, opts, *spec, r);
        if (blast) {
            j.field("messages", static_cast<long long>(spec->messages))
                .field("throughput_mb_s", r.throughput_mbs);
        } else {
            j.field("skew_us", spec->skew_us)
                .field("late_node", static_cast<long long>(r.late))
                .field("latency_us", r.latency_us)
                .array("done_us", r.done_us)
                .array("host_cpu_us", r.host_cpu_us);
        }
        std::printf("%s\n", counts_json(j, r).str().c_str());
        return 0;
    }
    std::printf(
        "%.*s: %s, %d nodes, %llu bytes (%u packet%s of at most %d), tree %s (depth %d), %s forwarding, root %d\n",
        static_cast<int>(command.size()), command.data(), preset_name(opts).c_str(),
        spec->model.nodes, static_cast<unsigned long long>(spec->bytes), r.packets,
        r.packets == 1 ? "" : "s", spec->model.mtu, r.tree.c_str(), r.depth,
        spec->forwarding.c_str(), spec->root);
    if (blast) {
        std::printf("throughput: %.2f MB/s seen by the sender over %d messages\n", r.throughput_mbs,
                    spec->messages);
    } else {
        if (r.late >= 0) std::printf("node %d posted %.2f us late\n", r.late, spec->skew_us);
        std::printf("latency: %.2f us (the last receiver)\n", r.latency_us);
        std::vector<double> receivers = r.host_cpu_us;
        receivers.erase(receivers.begin() + spec->root);
        std::sort(receivers.begin(), receivers.end());
        if (!receivers.empty()) {
            std::printf("host CPU (us): root %.2f; receivers least %.2f, median %.2f, most %.2f\n",
                        r.host_cpu_us[spec->root], receivers.front(),
                        receivers[receivers.size() / 2], receivers.back());
        }
        if (r.done_us.size() <= kPerNodeRows) {
            std::printf("completion per node (us):\n%s", per_node(r.done_us).c_str());
        } else {
            std::vector<double> receivers = r.done_us;
            receivers.erase(receivers.begin() + spec->root);
            std::sort(receivers.begin(), receivers.end());
            std::printf("receivers done (us): first %.2f, median %.2f, last %.2f (--json lists "
                        "every node)\n",
                        receivers.front(), receivers[receivers.size() / 2], receivers.back());
        }
    }
    print_counts(r);
    return 0;
}

// An allgather or barrier: the spec from the options both take, the run, and the report.
int run_collective(std::string_view command, const Options& opts, bool allgather) {
    std::string why;
    auto model = model_from(opts, &why);
    if (!model) return usage_error(command, why);
    if (!allgather && model->topology == "fattree") {
        if (opts.has("--algorithm"))
            return usage_error(command, "--algorithm: a fattree network takes --tree " +
                                            std::string(sim::kHwTreeNames));
        return run_hw_collective(command, opts, *model, true);
    }
    if (!allgather) {
        if (const auto bad = fattree_only(opts)) return usage_error(command, *bad);
        if (opts.has("--tree") || opts.has("--root")) {
            return usage_error(command,
                               std::string(opts.has("--tree") ? "--tree" : "--root") +
                                   ": only with the fattree topology (--preset quadrics-elan3)");
        }
    }
    sim::CollectiveSpec spec;
    spec.model = *model;
    spec.algorithm = opts.text("--algorithm", allgather ? "rd" : "nic");
    const auto bytes = opts.integer("--bytes", 0, 0, std::int64_t{1} << 40, &why);
    const auto loss = bytes ? opts.number("--loss", 0, 0, 0.999999, &why) : std::nullopt;
    const auto skew = loss ? opts.number("--skew", 0, 0, 1e9, &why) : std::nullopt;
    const auto seed = skew ? opts.integer("--seed", static_cast<std::int64_t>(model->seed), 0,
                                          std::numeric_limits<std::int64_t>::max(), &why)
                           : std::nullopt;
    if (!seed) return usage_error(command, why);
    spec.bytes = static_cast<std::uint64_t>(*bytes);
    spec.loss = *loss;
    spec.skew_us = *skew;
    spec.model.seed = static_cast<std::uint64_t>(*seed);
    bool bad_trace = false;
    auto trace = trace_from(opts, &why, &bad_trace);
    if (bad_trace) return usage_error(command, why);
    auto result = allgather ? sim::run_allgather(spec, trace.get(), &why)
                            : sim::run_barrier(spec, trace.get(), &why);
    if (!result) return usage_error(command, why);
    if (!close_trace(command, opts, trace.get())) return 1;
    const sim::CollectiveResult& r = *result;
    // GM's protocol ran: a host-based collective with p2p_flow=gm.
    const bool gm_run = r.algorithm.starts_with("host") && spec.model.p2p_flow == "gm";
    std::vector<double> cpu = r.host_cpu_us;
    std::sort(cpu.begin(), cpu.end());
    if (opts.has("--json")) {
        JsonObject j;
        j.field("command", command)
            .field("preset", preset_name(opts))
            .field("nodes", static_cast<long long>(spec.model.nodes));
        if (allgather) j.field("bytes", static_cast<long long>(spec.bytes));
        j.field("algorithm", r.algorithm)
            .field("loss", spec.loss)
            .field("skew_us", spec.skew_us)
            .field("late_node", static_cast<long long>(r.late))
            .field("seed", static_cast<long long>(spec.model.seed))
            .field("latency_us", r.latency_us);
        if (allgather) j.field("bandwidth_mb_s", r.bandwidth_mbs);
        j.field("host_cpu_us_median", cpu[cpu.size() / 2])
            .array("host_cpu_us", r.host_cpu_us)
            .array("done_us", r.done_us)
            .field("packets", static_cast<long long>(r.packets))
            .field("lost_packets", static_cast<long long>(r.lost))
            .field("nacks", static_cast<long long>(r.stats.nacks_sent))
            .field("nacks_forwarded", static_cast<long long>(r.stats.nacks_forwarded))
            .field("retransmissions", static_cast<long long>(r.stats.retransmitted))
            .field("duplicates", static_cast<long long>(r.stats.duplicates));
        if (gm_run) {
            j.field("gm_resent", static_cast<long long>(r.gm.resent))
                .field("gm_acks", static_cast<long long>(r.gm.acks))
                .field("gm_nacks", static_cast<long long>(r.gm.nacks))
                .field("gm_dropped_full", static_cast<long long>(r.gm.dropped_full))
                .field("gm_dropped_order", static_cast<long long>(r.gm.dropped_order))
                .field("gm_nack_go_backs", static_cast<long long>(r.gm.nack_go_backs))
                .field("gm_timeout_go_backs", static_cast<long long>(r.gm.timeout_go_backs));
        }
        j.field("events", static_cast<long long>(r.events));
        std::printf("%s\n", j.str().c_str());
        return 0;
    }
    std::printf("%.*s: %s, %d nodes", static_cast<int>(command.size()), command.data(),
                preset_name(opts).c_str(), spec.model.nodes);
    if (allgather)
        std::printf(", %llu bytes per node", static_cast<unsigned long long>(spec.bytes));
    std::printf(", algorithm %s\n", r.algorithm.c_str());
    if (r.late >= 0) std::printf("node %d posted %.2f us late\n", r.late, spec.skew_us);
    std::printf("latency: %.2f us (the last host to complete)", r.latency_us);
    if (allgather) std::printf("; bandwidth %.2f MB/s per host", r.bandwidth_mbs);
    std::printf("\nhost CPU per node (us): least %.2f, median %.2f, most %.2f\n", cpu.front(),
                cpu[cpu.size() / 2], cpu.back());
    if (r.done_us.size() <= kPerNodeRows) {
        std::printf("completion per node (us):\n%s", per_node(r.done_us).c_str());
    }
    std::printf("packets: %llu sent, %llu lost; %llu NACKs (%llu passed up), %llu retransmitted, "
                "%llu duplicates\n",
                static_cast<unsigned long long>(r.packets), static_cast<unsigned long long>(r.lost),
                static_cast<unsigned long long>(r.stats.nacks_sent),
                static_cast<unsigned long long>(r.stats.nacks_forwarded),
                static_cast<unsigned long long>(r.stats.retransmitted),
                static_cast<unsigned long long>(r.stats.duplicates));
    if (gm_run) {
        std::printf(
            "GM: %llu data packets sent again, %llu ACKs, %llu NACKs; %llu dropped with "
            "every receive buffer busy, %llu out of sequence; go-backs: %llu on a NACK, "
            "%llu on a timeout\n",
            static_cast<unsigned long long>(r.gm.resent),
            static_cast<unsigned long long>(r.gm.acks), static_cast<unsigned long long>(r.gm.nacks),
            static_cast<unsigned long long>(r.gm.dropped_full),
            static_cast<unsigned long long>(r.gm.dropped_order),
            static_cast<unsigned long long>(r.gm.nack_go_backs),
            static_cast<unsigned long long>(r.gm.timeout_go_backs));
    }
    return 0;
}

int run_allgather(const Options& opts) { return run_collective("allgather", opts, true); }
int run_barrier(const Options& opts) { return run_collective("barrier", opts, false); }

int run_alltoall(const Options& opts) {
    std::string why;
    const auto model = model_from(opts, &why);
    if (!model) return usage_error("alltoall", why);
    if (const std::string protocol = opts.text("--protocol", "lfc"); protocol != "lfc") {
        if (protocol != "fmmc")
            return usage_error("alltoall", "--protocol " + protocol + ": not one of lfc|fmmc");
        return run_fmmc_command("alltoall", opts, *model);
    }
    return run_alltoall_command(opts, *model);
}

int run_bcast(const Options& opts) { return run_experiment("bcast", opts, false); }
int run_throughput(const Options& opts) { return run_experiment("throughput", opts, true); }

// A fixed workload: a 256 KB broadcast over 1024 nodes of kesavan97 on the optimal tree, five
// times; the median rate is reported.
int run_bench(const Options& opts) {
    sim::BcastSpec spec;
    spec.model = sim::preset_model(*sim::find_preset("kesavan97"));
    spec.model.nodes = 1024;
    spec.bytes = 256 * 1024;
    spec.tree = "optimal";
    std::vector<double> rates;
    std::uint64_t events = 0;
    std::string why;
    for (int run = 0; run < 5; ++run) {
        const auto start = std::chrono::steady_clock::now();
        const auto result = sim::run_bcast(spec, nullptr, &why);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
        if (!result) {
            std::fprintf(stderr, "nicsim bench: %s\n", why.c_str());
            return 1;
        }
        events = result->events;
        rates.push_back(static_cast<double>(events) / wall.count());
        if (!opts.has("--json")) {
            std::fprintf(stderr, "run %d: %llu events in %.3f s\n", run + 1,
                         static_cast<unsigned long long>(events), wall.count());
        }
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    if (opts.has("--json")) {
        std::printf("%s\n",
                    JsonObject()
                        .field("command", "bench")
                        .field("workload", "kesavan97, 1024 nodes, 262144 bytes, optimal tree")
                        .field("events", static_cast<long long>(events))
                        .field("runs", static_cast<long long>(rates.size()))
                        .field("events_per_second", median)
                        .str()
                        .c_str());
    } else {
        std::printf(
            "bench: kesavan97, 1024 nodes, 262144 bytes, optimal tree: %llu events per run\n",
            static_cast<unsigned long long>(events));
        std::printf("%.2f million events per second (median of %zu runs)\n", median / 1e6,
                    rates.size());
    }
    return 0;
}

int run_params(const Options&) {
    const sim::Model defaults = sim::default_model();
    for (const sim::ModelParam& p : sim::model_params()) {
        std::printf("%-18s %-8s default %-10s %.*s\n", std::string(p.name).c_str(),
                    std::string(p.unit).c_str(), sim::model_param_value(defaults, p).c_str(),
                    static_cast<int>(p.help.size()), p.help.data());
    }
    return 0;
}

int run_presets(const Options&) {
    for (const sim::Preset& preset : sim::presets()) {
        std::printf("%.*s: %.*s\n", static_cast<int>(preset.name.size()), preset.name.data(),
                    static_cast<int>(preset.description.size()), preset.description.data());
        for (const sim::PresetValue& v : preset.values) {
            const std::string value =
                std::string(v.value) + " " + std::string(sim::find_model_param(v.param)->unit);
            std::printf("  %-18s %-12s %.*s\n", std::string(v.param).c_str(), value.c_str(),
                        static_cast<int>(v.source.size()), v.source.data());
        }
    }
    return 0;
}

int run_algorithms(const Options&) {
    std::printf("barrier:\n");
    for (int i = 0; i < nicsim_algorithm_count(NICSIM_COLL_BARRIER); ++i) {
        std::printf("  %-20s %s%s\n", nicsim_algorithm_name(NICSIM_COLL_BARRIER, i),
                    nicsim_algorithm_description(NICSIM_COLL_BARRIER, i),
                    i == 0 ? " (default)" : "");
    }
    std::printf("allgather:\n");
    for (const plan::AllgatherAlgorithm& a : plan::allgather_algorithms()) {
        std::printf("  %-20.*s %.*s%s\n", static_cast<int>(a.name.size()), a.name.data(),
                    static_cast<int>(a.description.size()), a.description.data(),
                    &a == plan::allgather_algorithms().data() ? " (default)" : "");
    }
    std::printf("multicast trees:\n");
    for (const plan::TreeShape& shape : plan::tree_shapes()) {
        std::printf("  %-20.*s %.*s\n", static_cast<int>(shape.name.size()), shape.name.data(),
                    static_cast<int>(shape.description.size()), shape.description.data());
    }
    return 0;
}

// Reads "SERIES X Y" lines (the series a word, x and y numbers) from stdin and draws one line per
// series, in the order they first appear.
int run_plot(const Options& opts) {
    if (!opts.has("--out")) return usage_error("plot", "--out FILE is required");
    sim::Figure figure{"", opts.text("--title"), opts.text("--x-label"), opts.text("--y-label"),
                       opts.has("--log-x"), opts.has("--log-y"), {}, {}};
    char label[256];
    double x, y;
    int line = 0;
    for (int n; (n = std::scanf("%255s %lf %lf", label, &x, &y)) != EOF;) {
        ++line;
        if (n != 3) {
            std::fprintf(stderr, "nicsim plot: stdin line %d: expected SERIES X Y\n", line);
            return 2;
        }
        // (Beyond 1e100 an axis's span or ticks overflow; on a log axis 0 and below have no place.)
        const auto drawable = [](double v, bool log) {
            return std::isfinite(v) && std::fabs(v) <= 1e100 && (!log || v > 0);
        };
        if (!drawable(x, figure.log_x) || !drawable(y, figure.log_y)) {
            std::fprintf(stderr,
                         "nicsim plot: stdin line %d: %s %g %g: X and Y must be numbers within "
                         "+-1e100, above 0 on a log axis (--log-x, --log-y)\n",
                         line, label, x, y);
            return 2;
        }
        auto it = std::find_if(figure.series.begin(), figure.series.end(),
                               [&](const sim::Series& s) { return s.label == label; });
        if (it == figure.series.end()) it = figure.series.insert(it, sim::Series{label, {}, {}});
        it->x.push_back(x);
        it->y.push_back(y);
    }
    const std::string out = opts.text("--out");
    std::FILE* f = std::fopen(out.c_str(), "w");
    const std::string text = sim::svg(figure);
    bool written = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f != nullptr && std::fclose(f) != 0) written = false;
    if (!written) {
        std::fprintf(stderr, "nicsim plot: --out %s: cannot write it\n", out.c_str());
        return 2;
    }
    return 0;
}

int run_pt2pt_cmd(const Options& opts) {
    std::string why;
    const auto model = model_from(opts, &why);
    return model ? run_pt2pt(opts, *model) : usage_error("pt2pt", why);
}

// clang-format off
const std::array kCommands = {
    Command{"kbinomial", "for each k: L1, total steps L1 + (m-1)k, and the optimal k", kKbinomialOpts, run_kbinomial},
    Command{"bcast", "simulate one broadcast: latency of the last receiver, per-node completion, packets", kBcastOpts, run_bcast},
    Command{"throughput", "simulate a single-sender blast: throughput seen by the sender (Bhoedjang et al. §5.1)", kThroughputOpts, run_throughput},
    Command{"alltoall", "simulate every node multicasting at once (Bhoedjang et al. §5.2): per-sender throughput, deadlock recoveries", alltoall_options(), run_alltoall},
    Command{"allgather", "simulate one allgather (Yu et al.): latency, bandwidth, host CPU time, packets, NACKs", kAllgatherOpts, run_allgather},
    Command{"barrier", "simulate one barrier: latency, host CPU time, packets", kBarrierOpts, run_barrier},
    Command{"hwtree", "plan a hardware-based multicast tree on a fat tree with faulty nodes (Coll et al.), or the depths over random fault maps", hwtree_options(), run_hwtree},
    Command{"pt2pt", "simulate point-to-point latency and bandwidth per packet size, and t0, r-inf and n-half (Pakin et al.)", kPt2ptOpts, run_pt2pt_cmd},
    Command{"bench", "simulated events per second of wall time on a fixed workload", kBenchOpts, run_bench},
    Command{"plot", "draw SERIES X Y lines from stdin as an SVG line plot (./bootstrap bench uses it)", kPlotOpts, run_plot},
    Command{"params", "list the model parameters: unit, default, meaning", kListOpts, run_params},
    Command{"presets", "list the presets with every value and its source", kListOpts, run_presets},
    Command{"algorithms", "list the engine's collective algorithms", kListOpts, run_algorithms},
};
// clang-format on

void print_usage(std::FILE* out) {
    std::fprintf(out,
                 "usage: nicsim [--version | --help] | nicsim COMMAND [OPTIONS]\n\ncommands:\n");
    for (const Command& c : kCommands) {
        std::fprintf(out, "  %-12.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                     static_cast<int>(c.summary.size()), c.summary.data());
    }
    std::fprintf(out, "\n`nicsim COMMAND --help` lists a command's options.\n");
}

}  // namespace
}  // namespace nicsim::tools

int main(int argc, char** argv) {
    using namespace nicsim::tools;
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("nicsim %s\n", nicsim_version());
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (argc < 2) {
        print_usage(stderr);
        return kBadUsage;
    }
    for (const Command& c : kCommands) {
        if (c.name != argv[1]) continue;
        std::string why;
        const auto opts = Options::parse(c.options, std::span(argv + 2, argv + argc), &why);
        if (!opts)
            return usage_error(c.name, why + " (see nicsim " + std::string(c.name) + " --help)");
        if (opts->has("--help")) {
            std::printf("usage: nicsim %.*s [OPTIONS]\n%.*s\n\noptions:\n%s",
                        static_cast<int>(c.name.size()), c.name.data(),
                        static_cast<int>(c.summary.size()), c.summary.data(),
                        describe(c.options).c_str());
            return 0;
        }
        progress = {c.name, std::chrono::steady_clock::now(), std::chrono::steady_clock::now()};
        nicsim::sim::Simulator::set_report(report_progress);
        try {
            return c.run(*opts);
        } catch (const std::bad_alloc&) {
            std::fprintf(stderr,
                         "nicsim %.*s: out of memory: the simulation outgrew this machine's "
                         "memory (fewer nodes or bytes)\n",
                         static_cast<int>(c.name.size()), c.name.data());
            return 1;
        }
    }
    std::fprintf(stderr, "nicsim: %s: unknown command or option (see nicsim --help)\n", argv[1]);
    return kBadUsage;
}
