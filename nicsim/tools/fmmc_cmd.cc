#include "tools/fmmc_cmd.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/fmmc.h"
#include "tools/json.h"

namespace nicsim::tools {

int run_fmmc_command(std::string_view command, const Options& opts, const sim::Model& model) {
    std::string why;
    for (const char* lfc_only : {"--forwarding", "--trace", "--deadlock-recovery"}) {
        if (opts.has(lfc_only))
            return usage_error(command, std::string(lfc_only) + ": only with --protocol lfc");
    }
    if (opts.has("--tree") && opts.text("--tree") != "binary") {
        return usage_error(command, "--tree " + opts.text("--tree") +
                                        ": FM/MC uses binary trees (Bhoedjang et al. §2.2)");
    }
    const bool all = command == "alltoall";
    const bool blast = command != "bcast";
    sim::FmmcSpec spec;
    spec.model = model;
    const auto bytes = opts.integer("--bytes", all ? 65536 : 0, 0, std::int64_t{1} << 40, &why);
    if (!bytes) return usage_error(command, why);
    spec.bytes = static_cast<std::uint64_t>(*bytes);
    const std::int64_t fallback =
        all || !blast ? 1
                      : std::max<std::int64_t>(16, (4 << 20) / std::max<std::int64_t>(*bytes, 1));
    const auto messages = opts.integer("--messages", fallback, 1, 1 << 24, &why);
    const auto root = messages ? opts.integer("--root", 0, 0, model.nodes - 1, &why) : std::nullopt;
    if (!root) return usage_error(command, why);
    spec.messages = static_cast<int>(*messages);
    spec.root = static_cast<Rank>(*root);
    spec.all_senders = all;
    const auto result = sim::run_fmmc(spec, &why);
    if (!result) return usage_error(command, why);
    const sim::FmmcResult& r = *result;
    const std::string preset = opts.text("--preset", "defaults");
    if (opts.has("--json")) {
        JsonObject j;
        j.field("command", command)
            .field("preset", preset)
            .field("protocol", "fmmc")
            .field("nodes", static_cast<long long>(model.nodes))
            .field("bytes", static_cast<long long>(spec.bytes))
            .field("messages", static_cast<long long>(spec.messages))
            .field("packets_per_message", static_cast<long long>(r.packets))
            .field("tree", "binary");
        if (blast) {
            j.field(all ? "per_sender_mb_s" : "throughput_mb_s", r.per_sender_mbs);
        } else {
            j.field("latency_us", r.latency_us);
        }
        j.field("credit_requests", static_cast<long long>(r.credit_requests))
            .field("token_hops", static_cast<long long>(r.token_hops))
            .field("swapped_packets", static_cast<long long>(r.swapped))
            .field("data_packets", static_cast<long long>(r.data_packets))
            .field("events", static_cast<long long>(r.events));
        std::printf("%s\n", j.str().c_str());
        return 0;
    }
    std::printf(
        "%.*s: %s, %d nodes, %llu bytes x %d message%s (%u packets of 256 bytes), FM/MC, tree "
        "binary%s\n",
        static_cast<int>(command.size()), command.data(), preset.c_str(), model.nodes,
        static_cast<unsigned long long>(spec.bytes), spec.messages, spec.messages == 1 ? "" : "s",
        r.packets, all ? ", every node sends" : (", root " + std::to_string(spec.root)).c_str());
    if (all) {
        std::printf("per-sender throughput: %.2f MB/s (mean)\n", r.per_sender_mbs);
    } else if (blast) {
        std::printf("throughput: %.2f MB/s seen by the sender over %d messages\n", r.per_sender_mbs,
                    spec.messages);
    } else {
        std::printf("latency: %.2f us (the last receiver)\n", r.latency_us);
    }
    std::printf(
        "FM/MC: %llu credit requests, %llu token hops, %llu packets swapped to host memory, "
        "%llu data packets\n",
        static_cast<unsigned long long>(r.credit_requests),
        static_cast<unsigned long long>(r.token_hops), static_cast<unsigned long long>(r.swapped),
        static_cast<unsigned long long>(r.data_packets));
    return 0;
}

}  // namespace nicsim::tools
