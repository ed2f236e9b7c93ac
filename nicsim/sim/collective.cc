#include "sim/collective.h"

#include <algorithm>
#include <functional>

#include "nic/allgather_op.h"
#include "plan/allgather.h"
#include "plan/barrier.h"
#include "sim/bcast.h"
#include "sim/cluster.h"
#include "sim/simulator.h"

namespace nicsim::sim {

namespace {

constexpr std::string_view kHostPrefix = "host-";

// Posts the collective on one node at a time.
using Post = std::function<void(Cluster&, Rank node, Time at)>;

std::optional<CollectiveResult> run(const CollectiveSpec& spec, bool on_nic, const Post& post,
                                    Trace* trace, std::string* why) {
    const Model& model = spec.model;
    const Rank n = model.nodes;
    if (!(spec.loss >= 0 && spec.loss < 1)) {
        *why = "--loss " + std::to_string(spec.loss) + ": must be at least 0 and below 1";
        return std::nullopt;
    }
    if (spec.loss > 0 && !on_nic) {
        *why =
            "--loss: applies to NIC-based algorithms only; the host-based ones run over LFC's "
            "NIC, which never loses a packet, or GM's (p2p_flow=gm), which loses only those its "
            "receive buffers cannot take";
        return std::nullopt;
    }
    if (!skew_fits(spec.skew_us, why)) return std::nullopt;
    std::optional<Topology> topology = make_topology(model, why);
    if (!topology) return std::nullopt;

    Simulator sim;
    Cluster cluster(model, std::move(*topology), nic::Forwarding::fpfs, sim, trace);
    if (on_nic) {
        Cluster::CollectiveOptions options;
        options.payloads = spec.payloads;
        options.loss = spec.loss;
        // Channels that hold a whole allgather: a late host loses nothing (Yu et al. §4.2).
        options.channels.bytes = std::max<std::uint64_t>(
            options.channels.bytes, spec.bytes * static_cast<std::uint64_t>(n));
        cluster.enable_collectives(options);
    }
    CollectiveResult result;
    if (spec.skew_us > 0) result.late = drawn_late_host(model);
    for (Rank node = 0; node < n; ++node) {
        post(cluster, node, node == result.late ? from_us(spec.skew_us) : 0);
    }
    result.events = sim.run();

    if (cluster.gave_up()) {
        char input[96];
        std::snprintf(input, sizeof input, "--loss %g, --skew %g us", spec.loss, spec.skew_us);
        *why = "the collective gave up: " + cluster.error() + " (" + input +
               ": too many packets lost, or a host too late, to finish)";
        return std::nullopt;
    }
    if (!cluster.error().empty()) {
        *why = "simulation broke an invariant: " + cluster.error();
        return std::nullopt;
    }
    for (Rank node = 0; node < n; ++node) {
        const Cluster::CollectiveRecord& r = cluster.collective(node);
        if (!r.complete) {
            *why = "simulation broke an invariant: node " + std::to_string(node) +
                   " never completed its collective";
            return std::nullopt;
        }
        result.done_us.push_back(to_us(r.done));
        result.host_cpu_us.push_back(to_us(r.host_busy));
        result.latency_us = std::max(result.latency_us, to_us(r.done));
    }
    if (!cluster.check_quiescent(why)) {
        *why = "simulation broke an invariant: " + *why;
        return std::nullopt;
    }
    const nic::NicStats totals = cluster.totals();
    result.gm = cluster.gm_totals();
    result.packets = on_nic ? cluster.collective_packets()
                            : totals.data_sent + totals.credit_packets + result.gm.data_sent +
                                  result.gm.acks + result.gm.nacks;
    result.lost = cluster.lost_packets();
    result.stats = cluster.collective_totals();
    if (result.latency_us > 0) {
        result.bandwidth_mbs =
            static_cast<double>(spec.bytes) * static_cast<double>(n - 1) / result.latency_us;
    }
    if (spec.payloads) {
        for (Rank node = 0; node < n; ++node) {
            const std::span<const std::byte> got = cluster.result(node);
            for (std::uint64_t i = 0; i < got.size(); ++i) {
                const Rank origin = static_cast<Rank>(i / spec.bytes);
                if (got[i] != Cluster::block_byte(origin, i % spec.bytes)) {
                    *why = "simulation broke an invariant: node " + std::to_string(node) +
                           " has a wrong byte " + std::to_string(i % spec.bytes) +
                           " in the block of " + std::to_string(origin);
                    return std::nullopt;
                }
            }
        }
    }
    return result;
}

// A host-based collective's steps: each transfer one message.
std::vector<Cluster::HostStep> host_steps(const plan::AllgatherSchedule& schedule,
                                          std::uint64_t block_bytes) {
    std::vector<Cluster::HostStep> steps;
    for (const plan::AllgatherStep& s : schedule) {
        Cluster::HostStep& step = steps.emplace_back();
        for (const plan::Transfer& t : s.sends) {
            std::uint64_t blocks = 0;
            for (const plan::BlockRange& r : t.blocks)
                blocks += static_cast<std::uint64_t>(r.count);
            step.sends.push_back({t.peer, blocks * block_bytes});
        }
        for (const plan::Transfer& t : s.recvs) step.from.push_back(t.peer);
    }
    return steps;
}

std::vector<Cluster::HostStep> host_steps(const plan::BarrierSchedule& schedule) {
    std::vector<Cluster::HostStep> steps;
    for (const plan::BarrierStep& s : schedule) {
        Cluster::HostStep& step = steps.emplace_back();
        for (const Rank dst : s.send_to) step.sends.push_back({dst, 0});
        step.from = s.recv_from;
    }
    return steps;
}

}  // namespace

std::optional<CollectiveResult> run_allgather(const CollectiveSpec& spec, Trace* trace,
                                              std::string* why) {
    const plan::AllgatherAlgorithm* algorithm = plan::find_allgather_algorithm(spec.algorithm);
    if (algorithm == nullptr) {
        std::string names;
        for (const plan::AllgatherAlgorithm& a : plan::allgather_algorithms()) {
            if (!names.empty()) names += '|';
            names += a.name;
        }
        *why = "--algorithm " + spec.algorithm + ": not one of " + names;
        return std::nullopt;
    }
    const Rank n = spec.model.nodes;
    const auto mtu = static_cast<std::uint64_t>(spec.model.mtu);
    // A NIC-based transfer numbers its packets in 24 bits, a host-based message in 32.
    const int bits = algorithm->on_host ? 32 : nic::kAllgatherIndexBits;
    if (spec.bytes > mtu * ((std::uint64_t{1} << bits) - 1) / static_cast<std::uint64_t>(n)) {
        *why = "--bytes " + std::to_string(spec.bytes) + ": " + std::to_string(n) +
               " blocks take more than 2^" + std::to_string(bits) + " packets of " +
               std::to_string(mtu) + " bytes";
        return std::nullopt;
    }
    if (spec.payloads && (algorithm->on_host || spec.bytes * static_cast<std::uint64_t>(n) *
                                                        static_cast<std::uint64_t>(n) >
                                                    (1ULL << 30))) {
        *why = "payloads: only a NIC-based allgather of 1 GiB or less in all carries bytes";
        return std::nullopt;
    }
    Post post;
    if (algorithm->on_host) {
        post = [&](Cluster& cluster, Rank node, Time at) {
            cluster.run_on_host(node, host_steps(algorithm->plan(node, n), spec.bytes), at);
        };
    } else {
        post = [&](Cluster& cluster, Rank node, Time at) {
            cluster.post_allgather(node, *algorithm, spec.bytes, at);
        };
    }
    auto result = run(spec, !algorithm->on_host, post, trace, why);
    if (result) result->algorithm = algorithm->name;
    return result;
}

std::vector<std::string> barrier_names() {
    std::vector<std::string> names;
    for (const plan::BarrierAlgorithm& a : plan::barrier_algorithms()) {
        names.emplace_back(a.name);
        names.push_back(std::string(kHostPrefix) + std::string(a.name));
    }
    names.emplace_back("nic");
    names.emplace_back("host");
    return names;
}

std::optional<CollectiveResult> run_barrier(const CollectiveSpec& spec, Trace* trace,
                                            std::string* why) {
    if (spec.loss > 0) {
        *why = "--loss: barrier tokens are not retransmitted";
        return std::nullopt;
    }
    if (spec.payloads) {
        *why = "payloads: a barrier carries none";
        return std::nullopt;
    }
    const Rank n = spec.model.nodes;
    const bool on_host = spec.algorithm == "host" || spec.algorithm.starts_with(kHostPrefix);
    const bool chosen = spec.algorithm == "nic" || spec.algorithm == "host";
    const std::string name = spec.algorithm.starts_with(kHostPrefix)
                                 ? spec.algorithm.substr(kHostPrefix.size())
                                 : spec.algorithm;
    const plan::BarrierAlgorithm* algorithm = nullptr;
    std::size_t fewest = 0;
    for (const plan::BarrierAlgorithm& a : plan::barrier_algorithms()) {
        if (chosen) {
            // The model's choice: the fewest tokens rank 0 takes in turn (a NIC handles one at
            // a time, and a step costs at least one), the first such in the table.
            std::size_t turns = 0;
            for (const plan::BarrierStep& step : a.plan(0, n)) {
                turns += std::max<std::size_t>(1, step.recv_from.size());
            }
            if (algorithm == nullptr || turns < fewest) {
                algorithm = &a;
                fewest = turns;
            }
        } else if (a.name == name) {
            algorithm = &a;
        }
    }
    if (algorithm == nullptr) {
        std::string names;
        for (const std::string& s : barrier_names()) names += (names.empty() ? "" : "|") + s;
        *why = "--algorithm " + spec.algorithm + ": not one of " + names;
        return std::nullopt;
    }
    Post post;
    if (on_host) {
        post = [&](Cluster& cluster, Rank node, Time at) {
            cluster.run_on_host(node, host_steps(algorithm->plan(node, n)), at);
        };
    } else {
        post = [&](Cluster& cluster, Rank node, Time at) {
            cluster.post_barrier(node, *algorithm, at);
        };
    }
    auto result = run(spec, !on_host, post, trace, why);
    if (result)
        result->algorithm =
            (on_host ? std::string(kHostPrefix) : "") + std::string(algorithm->name);
    return result;
}

}  // namespace nicsim::sim
