#include "tools/alltoall_cmd.h"

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "sim/alltoall.h"
#include "tools/fmmc_cmd.h"
#include "tools/json.h"

namespace nicsim::tools {
namespace {

// clang-format off
constexpr std::array kAlltoallOpts = {
    OptionSpec{"--preset", "P", "model preset (see nicsim presets); default: the model defaults"},
    OptionSpec{"--nodes", "N", "nodes in the cluster (default: the preset's)"},
    OptionSpec{"--set", "NAME=VALUE", "set one model parameter (see nicsim params); repeatable", true},
    OptionSpec{"--bytes", "B", "each node's message length in bytes (default 65536, Bhoedjang et al. Table 1)"},
    OptionSpec{"--tree", "T", "binomial|binary|chain|flat: every node's multicast tree (default binomial)"},
    OptionSpec{"--messages", "M", "messages each node multicasts (default 1)"},
    OptionSpec{"--deadlock-recovery", "on|off", "LFC's deadlock channels and recovery (default on); off: a deadlock is reported, exit status 3"},
    kProtocolOpt,
    OptionSpec{"--json", "", "print one JSON object instead of text"},
    OptionSpec{"--trace", "FILE", "write a Chrome trace-event file (Perfetto): one track per host, NIC and link"},
    OptionSpec{"--help", "", "print this text"},
};
// clang-format on

std::string stuck_json(const std::vector<sim::StuckNic>& stuck) {
    std::string out = "[";
    for (const sim::StuckNic& s : stuck) {
        std::string queues = "[";
        for (const nic::BlockedQueue& q : s.queues) {
            queues += (queues.size() > 1 ? "," : "") +
                      JsonObject()
                          .field("to", static_cast<long long>(q.dst))
                          .field("packets", static_cast<long long>(q.packets))
                          .str();
        }
        out += (out.size() > 1 ? "," : "") + JsonObject()
                                                 .field("node", static_cast<long long>(s.node))
                                                 .raw("blocked", queues + "]")
                                                 .str();
    }
    return out + "]";
}

}  // namespace

std::span<const OptionSpec> alltoall_options() {
    return kAlltoallOpts;
}

int run_alltoall_command(const Options& opts, sim::Model model) {
    std::string why;
    sim::AlltoallSpec spec;
    const auto bytes = opts.integer("--bytes", 65536, 0, std::int64_t{1} << 40, &why);
    const auto messages = bytes ? opts.integer("--messages", 1, 1, 1 << 20, &why) : std::nullopt;
    if (!messages) return usage_error("alltoall", why);
    const std::string recovery = opts.text("--deadlock-recovery", "on");
    if (recovery != "on" && recovery != "off") {
        return usage_error("alltoall", "--deadlock-recovery " + recovery + ": not one of on|off");
    }
    model.deadlock_recovery = recovery == "on" ? 1 : 0;
    spec.model = model;
    spec.bytes = static_cast<std::uint64_t>(*bytes);
    spec.messages = static_cast<int>(*messages);
    spec.tree = opts.text("--tree", "binomial");
    std::unique_ptr<sim::Trace> trace;
    if (opts.has("--trace")) {
        trace = sim::Trace::open(opts.text("--trace"), &why);
        if (!trace) return usage_error("alltoall", why);
    }
    const auto result = sim::run_alltoall(spec, trace.get(), &why);
    if (!result) return usage_error("alltoall", why);
    if (trace && !trace->close()) {
        std::fprintf(stderr, "nicsim alltoall: --trace %s: write failed\n",
                     opts.text("--trace").c_str());
        return 1;
    }
    const sim::AlltoallResult& r = *result;
    const std::string preset = opts.text("--preset", "defaults");
    if (opts.has("--json")) {
        JsonObject j;
        j.field("command", "alltoall")
            .field("preset", preset)
            .field("nodes", static_cast<long long>(model.nodes))
            .field("bytes", static_cast<long long>(spec.bytes))
            .field("messages", static_cast<long long>(spec.messages))
            .field("packets_per_message", static_cast<long long>(r.packets))
            .field("tree", r.tree)
            .field("deadlock_recovery", recovery)
            .field("deadlocked", r.deadlocked);
        if (r.deadlocked) {
            j.raw("stuck", stuck_json(r.stuck));
        } else {
            j.field("per_sender_mb_s", r.per_sender_mbs)
                .field("slowest_sender_mb_s", r.slowest_sender_mbs)
                .field("done_us", r.done_us);
        }
        j.field("multicasts", static_cast<long long>(r.multicasts))
            .field("recoveries", static_cast<long long>(r.recoveries))
            .field("recovery_starters", static_cast<long long>(r.recovery_starters))
            .field("recovery_packets", static_cast<long long>(r.recovery_packets))
            .field("recoveries_per_multicast", r.recoveries_per_multicast)
            .field("recovery_packets_per_multicast", r.recovery_packets_per_multicast)
            .field("data_packets", static_cast<long long>(r.totals.data_sent))
            .field("credit_packets", static_cast<long long>(r.totals.credit_packets))
            .field("blocked_sends", static_cast<long long>(r.totals.blocked))
            .field("events", static_cast<long long>(r.events));
        std::printf("%s\n", j.str().c_str());
        return r.deadlocked ? kDeadlocked : 0;
    }
    std::printf(
        "alltoall: %s, %d nodes, %llu bytes x %d message%s per node (%u packet%s of at most %d), "
        "tree %s, deadlock recovery %s\n",
        preset.c_str(), model.nodes, static_cast<unsigned long long>(spec.bytes), spec.messages,
        spec.messages == 1 ? "" : "s", r.packets, r.packets == 1 ? "" : "s", model.mtu,
        r.tree.c_str(), recovery.c_str());
    if (r.deadlocked) {
        std::printf("deadlock: no event left, %zu NICs hold blocked sends: %s\n", r.stuck.size(),
                    sim::describe_deadlock(r.stuck).c_str());
        return kDeadlocked;
    }
    std::printf("per-sender throughput: %.2f MB/s (mean; slowest %.2f), all done at %.1f us\n",
                r.per_sender_mbs, r.slowest_sender_mbs, r.done_us);
    std::printf(
        "deadlock recovery (Table 1): %.3f recoveries and %.2f recovery packets per multicast "
        "packet (%llu of %llu packets started one; %llu recoveries, %llu packets in channels)\n",
        r.recoveries_per_multicast, r.recovery_packets_per_multicast,
        static_cast<unsigned long long>(r.recovery_starters),
        static_cast<unsigned long long>(r.multicasts),
        static_cast<unsigned long long>(r.recoveries),
        static_cast<unsigned long long>(r.recovery_packets));
    std::printf("packets: %llu data, %llu credit updates, %llu waited for a credit\n",
                static_cast<unsigned long long>(r.totals.data_sent),
                static_cast<unsigned long long>(r.totals.credit_packets),
                static_cast<unsigned long long>(r.totals.blocked));
    return 0;
}

}  // namespace nicsim::tools
