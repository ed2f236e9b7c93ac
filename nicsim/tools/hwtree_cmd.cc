#include "tools/hwtree_cmd.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/hwtree.h"
#include "sim/hw_collective.h"
#include "tools/json.h"

namespace nicsim::tools {

namespace {

// The backtracking planner gives up after this many recursive calls (reported as undecided).
constexpr std::uint64_t kOptimalCalls = 1'000'000;

const std::array kHwtreeOpts = {
    OptionSpec{
        "--nodes", "N",
        "nodes of the fat tree, 1..65536 (required); N below a power of 4 populates the first N ports"},
    kFaultyOpt,
    kFaultyPercentOpt,
    OptionSpec{"--source", "S", "the multicast's source (default 0)"},
    kPlannerOpt,
    OptionSpec{
        "--trials", "T",
        "draw T fault maps (with --faulty-percent) and print the distribution of tree depths"},
    OptionSpec{"--seed", "X", "seed of the fault maps (default 1)"},
    kDotOpt,
    OptionSpec{"--json", "", "print one JSON object instead of text"},
    OptionSpec{"--help", "", "print this text"},
};
// clang-format on

std::string range_text(plan::NodeRange r) {
    return "[" + std::to_string(r.lo) + "," + std::to_string(r.hi) + "]";
}

// The faulty nodes from --faulty or --faulty-percent, none without either; `source` must stay
// live. Empty with one line in *why for bad input.
std::optional<std::vector<Rank>> faults_from(const Options& opts, Rank nodes, Rank source,
                                             sim::Rng& rng, std::string* why) {
    if (opts.has("--faulty") && opts.has("--faulty-percent")) {
        *why = "--faulty and --faulty-percent: give one of them";
        return std::nullopt;
    }
    std::vector<Rank> faulty;
    if (opts.has("--faulty-percent")) {
        const auto p = opts.number("--faulty-percent", 0, 0, 100, why);
        if (!p) return std::nullopt;
        const auto count = std::min<std::int64_t>(std::llround(*p / 100 * nodes), nodes - 1);
        return sim::random_faults(nodes, count, source, rng);
    }
    const std::string list = opts.text("--faulty");
    for (std::size_t at = 0; opts.has("--faulty") && at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string item = list.substr(at, comma - at);
        char* end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0') {
            *why = "--faulty " + list + ": '" + item + "' is not a node number";
            return std::nullopt;
        }
        if (v < 0 || v >= nodes) {
            *why = "--faulty " + item + ": not a node of 0.." + std::to_string(nodes - 1);
            return std::nullopt;
        }
        if (v == source) {
            *why = "--faulty " + item + ": the source is faulty";
            return std::nullopt;
        }
        faulty.push_back(static_cast<Rank>(v));
        at = comma + 1;
    }
    std::sort(faulty.begin(), faulty.end());
    faulty.erase(std::unique(faulty.begin(), faulty.end()), faulty.end());
    return faulty;
}

// Graphviz: the source and each group a box; an arrow per multicast from the group that gave its
// sender the message, labelled with the step and the sender.
bool write_dot(const std::string& path, const plan::HwTree& tree, std::string* why) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(path.c_str(), "w"), std::fclose);
    if (!out) {
        *why = "--dot " + path + ": cannot write";
        return false;
    }
    std::fprintf(out.get(), "digraph hwtree {\n  node [shape=box];\n  n%d [label=\"source %d\"];\n",
                 tree.source, tree.source);
    std::map<Rank, std::string> holder;  // node -> the graph node it got the message in
    holder[tree.source] = "n" + std::to_string(tree.source);
    for (std::size_t s = 0; s < tree.steps.size(); ++s) {
        for (const plan::HwMulticast& m : tree.steps[s]) {
            const std::string g = "g" + std::to_string(m.dest.lo) + "_" + std::to_string(m.dest.hi);
            std::fprintf(out.get(), "  %s [label=\"%s\"];\n  %s -> %s [label=\"step %zu: %d\"];\n",
                         g.c_str(), range_text(m.dest).c_str(), holder[m.source].c_str(), g.c_str(),
                         s + 1, m.source);
        }
        for (const plan::HwMulticast& m : tree.steps[s]) {
            for (Rank v = m.dest.lo; v <= m.dest.hi; ++v) {
                holder.emplace(v,
                               "g" + std::to_string(m.dest.lo) + "_" + std::to_string(m.dest.hi));
            }
        }
    }
    std::fprintf(out.get(), "}\n");
    if (std::ferror(out.get())) {
        *why = "--dot " + path + ": write failed";
        return false;
    }
    return true;
}

std::string steps_json(const plan::HwTree& tree) {
    std::string out = "[";
    for (std::size_t s = 0; s < tree.steps.size(); ++s) {
        out += s == 0 ? "[" : ",[";
        for (std::size_t i = 0; i < tree.steps[s].size(); ++i) {
            const plan::HwMulticast& m = tree.steps[s][i];
            out += (i == 0 ? "" : ",") + JsonObject()
                                             .field("source", static_cast<long long>(m.source))
                                             .field("lo", static_cast<long long>(m.dest.lo))
                                             .field("hi", static_cast<long long>(m.dest.hi))
                                             .str();
        }
        out += "]";
    }
    return out + "]";
}

void print_steps(const plan::HwTree& tree) {
    for (std::size_t s = 0; s < tree.steps.size(); ++s) {
        std::printf("step %zu:", s + 1);
        for (std::size_t i = 0; i < tree.steps[s].size(); ++i) {
            const plan::HwMulticast& m = tree.steps[s][i];
            std::printf("%s %d -> %s", i == 0 ? "" : ",", m.source, range_text(m.dest).c_str());
        }
        std::printf("\n");
    }
}

std::string list_text(const std::vector<Rank>& nodes) {
    std::string out;
    for (const Rank v : nodes) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out.empty() ? "none" : out;
}

plan::OptimalSearch plan_tree(const plan::FatTree& net, const std::string& planner, Rank source,
                              const std::vector<plan::NodeRange>& groups) {
    if (planner == "optimal") return plan::optimal_hw_tree(net, source, groups, kOptimalCalls);
    return {plan::greedy_hw_tree(net, source, groups), true, 0};
}

}  // namespace

std::span<const OptionSpec> hwtree_options() { return kHwtreeOpts; }

int run_hwtree(const Options& opts) {
    const std::string_view command = "hwtree";
    std::string why;
    if (!opts.has("--nodes")) return usage_error(command, "--nodes: required");
    const auto nodes = opts.integer("--nodes", 0, 1, 65536, &why);
    const auto source = nodes ? opts.integer("--source", 0, 0, *nodes - 1, &why) : std::nullopt;
    const auto trials = source ? opts.integer("--trials", 0, 1, 1'000'000, &why) : std::nullopt;
    const auto seed =
        trials ? opts.integer("--seed", 1, 0, std::numeric_limits<std::int64_t>::max(), &why)
               : std::nullopt;
    if (!seed) return usage_error(command, why);
    const std::string planner = opts.text("--planner", "greedy");
    if (planner != "greedy" && planner != "optimal") {
        return usage_error(command, "--planner " + planner + ": not one of greedy|optimal");
    }
    if (opts.has("--trials") && !opts.has("--faulty-percent")) {
        return usage_error(command, "--trials: needs --faulty-percent to draw the fault maps");
    }
    if (opts.has("--trials") && opts.has("--dot")) {
        return usage_error(command, "--dot: draws one tree, not --trials");
    }
    const auto n = static_cast<Rank>(*nodes);
    const auto src = static_cast<Rank>(*source);
    const plan::FatTree net = plan::FatTree::holding(n);
    sim::Rng rng(static_cast<std::uint64_t>(*seed), 0x4f7);
    const bool json = opts.has("--json");

    if (opts.has("--trials")) {
        std::map<int, std::int64_t> depths;
        std::int64_t undecided = 0;
        std::int64_t faulty = 0;
        std::vector<double> wall_ms;  // the planner's time per tree: the benchmark of its speed
        for (std::int64_t t = 0; t < *trials; ++t) {
            const auto faults = faults_from(opts, n, src, rng, &why);
            if (!faults) return usage_error(command, why);
            faulty = static_cast<std::int64_t>(faults->size());
            const std::vector<plan::NodeRange> groups = plan::live_groups(n, *faults);
            const auto start = std::chrono::steady_clock::now();
            const auto result = plan_tree(net, planner, src, groups);
            wall_ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
            ++depths[result.tree.depth()];
            undecided += !result.decided;
        }
        if (json) {
            std::string rows = "{";
            for (const auto& [d, count] : depths)
                rows += (rows.size() == 1 ? "\"" : ",\"") + std::to_string(d) +
                        "\":" + std::to_string(count);
            std::printf("%s\n", JsonObject()
                                    .field("command", "hwtree")
                                    .field("nodes", static_cast<long long>(n))
                                    .field("faulty_percent",
                                           *opts.number("--faulty-percent", 0, 0, 100, &why))
                                    .field("faulty", static_cast<long long>(faulty))
                                    .field("source", static_cast<long long>(src))
                                    .field("planner", planner)
                                    .field("trials", static_cast<long long>(*trials))
                                    .field("seed", static_cast<long long>(*seed))
                                    .raw("depths", rows + "}")
                                    .field("undecided", static_cast<long long>(undecided))
                                    .str()
                                    .c_str());
            return 0;
        }
        std::printf(
            "hwtree: %d nodes (%d-level quaternary fat tree), %lld faulty (%s %%), source %d, planner %s, %lld trials, seed %lld\n",
            n, net.levels(), static_cast<long long>(faulty), opts.text("--faulty-percent").c_str(),
            src, planner.c_str(), static_cast<long long>(*trials), static_cast<long long>(*seed));
        std::printf("%6s %8s %9s\n", "steps", "trials", "fraction");
        for (const auto& [d, count] : depths) {
            std::printf("%6d %8lld %9.3f\n", d, static_cast<long long>(count),
                        static_cast<double>(count) / static_cast<double>(*trials));
        }
        std::sort(wall_ms.begin(), wall_ms.end());
        std::printf("planning time per tree (wall clock): median %.3f ms, slowest %.3f ms\n",
                    wall_ms[wall_ms.size() / 2], wall_ms.back());
        if (undecided > 0) {
            std::printf(
                "optimal undecided in %lld trials (gave up after %llu calls; the depth is the best found)\n",
                static_cast<long long>(undecided), static_cast<unsigned long long>(kOptimalCalls));
        }
        return 0;
    }

    const auto faults = faults_from(opts, n, src, rng, &why);
    if (!faults) return usage_error(command, why);
    const std::vector<plan::NodeRange> groups = plan::live_groups(n, *faults);
    const plan::OptimalSearch result = plan_tree(net, planner, src, groups);
    if (opts.has("--dot") && !write_dot(opts.text("--dot"), result.tree, &why))
        return usage_error(command, why);
    if (json) {
        std::string group_list = "[";
        for (const plan::NodeRange& g : groups) {
            group_list += (group_list.size() == 1 ? "[" : ",[") + std::to_string(g.lo) + "," +
                          std::to_string(g.hi) + "]";
        }
        std::printf("%s\n", JsonObject()
                                .field("command", "hwtree")
                                .field("nodes", static_cast<long long>(n))
                                .array("faulty", *faults)
                                .field("source", static_cast<long long>(src))
                                .field("planner", planner)
                                .raw("groups", group_list + "]")
                                .raw("steps", steps_json(result.tree))
                                .field("depth", static_cast<long long>(result.tree.depth()))
                                .field("decided", result.decided)
                                .str()
                                .c_str());
        return 0;
    }
    std::printf(
        "hwtree: %d nodes (%d-level quaternary fat tree), faulty %s, source %d, planner %s\n", n,
        net.levels(), list_text(*faults).c_str(), src, planner.c_str());
    std::printf("groups:");
    for (const plan::NodeRange& g : groups) std::printf(" %s", range_text(g).c_str());
    std::printf("\n");
    print_steps(result.tree);
    std::printf("depth: %d step%s%s\n", result.tree.depth(), result.tree.depth() == 1 ? "" : "s",
                result.decided ? "" : " (optimal undecided: the best found)");
    return 0;
}

int run_hw_collective(std::string_view command, const Options& opts, const sim::Model& model,
                      bool barrier) {
    std::string why;
    sim::HwCollectiveSpec spec;
    spec.model = model;
    spec.tree = opts.text("--tree", "hwtree");
    spec.planner = opts.text("--planner", "greedy");
    const auto root = opts.integer("--root", 0, 0, model.nodes - 1, &why);
    const auto bytes =
        root ? opts.integer("--bytes", 0, 0, std::int64_t{1} << 40, &why) : std::nullopt;
    if (!bytes) return usage_error(command, why);
    spec.root = static_cast<Rank>(*root);
    spec.bytes = static_cast<std::uint64_t>(*bytes);
    sim::Rng rng(model.seed, 0x4f7);
    auto faults = faults_from(opts, model.nodes, spec.root, rng, &why);
    if (!faults) return usage_error(command, why);
    spec.faulty = *faults;
    std::unique_ptr<sim::Trace> trace;
    if (opts.has("--trace")) {
        trace = sim::Trace::open(opts.text("--trace"), &why);
        if (!trace) return usage_error(command, why);
    }
    const auto result = barrier ? sim::run_hw_barrier(spec, trace.get(), &why)
                                : sim::run_hw_bcast(spec, trace.get(), &why);
    if (!result) return usage_error(command, why);
    if (trace && !trace->close())
        return usage_error(command, "--trace " + opts.text("--trace") + ": write failed");
    if (opts.has("--dot") && !write_dot(opts.text("--dot"), result->plan, &why))
        return usage_error(command, why);
    const sim::HwCollectiveResult& r = *result;
    if (opts.has("--json")) {
        JsonObject j;
        j.field("command", command)
            .field("preset", opts.text("--preset", "defaults"))
            .field("nodes", static_cast<long long>(model.nodes))
            .array("faulty", spec.faulty)
            .field("tree", r.tree)
            .field("depth", static_cast<long long>(r.depth))
            .field("root", static_cast<long long>(spec.root));
        if (!barrier) j.field("bytes", static_cast<long long>(spec.bytes));
        j.field("latency_us", r.latency_us);
        if (!barrier) j.field("bandwidth_mb_s", r.bandwidth_mbs);
        j.array("done_us", r.done_us)
            .raw("steps", steps_json(r.plan))
            .field("packets", static_cast<long long>(r.packets))
            .field("tests", static_cast<long long>(r.tests))
            .field("events", static_cast<long long>(r.events));
        std::printf("%s\n", j.str().c_str());
        return 0;
    }
    std::printf("%.*s: %s, %d nodes, faulty %s, tree %s (depth %d), root %d",
                static_cast<int>(command.size()), command.data(),
                opts.text("--preset", "defaults").c_str(), model.nodes,
                list_text(spec.faulty).c_str(), r.tree.c_str(), r.depth, spec.root);
    if (!barrier) std::printf(", %llu bytes", static_cast<unsigned long long>(spec.bytes));
    std::printf("\n");
    print_steps(r.plan);
    std::printf("latency: %.2f us (the last node)", r.latency_us);
    if (!barrier) std::printf("; bandwidth %.2f MB/s", r.bandwidth_mbs);
    std::printf("\npackets: %llu on the network, %llu barrier tests\n",
                static_cast<unsigned long long>(r.packets),
                static_cast<unsigned long long>(r.tests));
    return 0;
}

}  // namespace nicsim::tools
