#include "sim/alltoall.h"

#include <algorithm>

#include "sim/bcast.h"
#include "sim/cluster.h"
#include "sim/simulator.h"

namespace nicsim::sim {

std::optional<AlltoallResult> run_alltoall(const AlltoallSpec& spec, Trace* trace,
                                           std::string* why) {
    const Model& model = spec.model;
    const Rank n = model.nodes;
    if (spec.messages < 1) {
        *why = "--messages " + std::to_string(spec.messages) + ": must be at least 1";
        return std::nullopt;
    }
    const std::uint64_t packets = packet_count(spec.bytes, model.mtu);
    if (!blast_fits(model, packets, spec.bytes, why)) return std::nullopt;
    const plan::TreeShape* shape = nullptr;
    if (spec.trees.empty()) {
        shape = plan::find_tree_shape(spec.tree);
        if (shape == nullptr || shape->takes_k) {
            *why = "--tree " + spec.tree + ": not one of binomial|binary|chain|flat";
            return std::nullopt;
        }
    } else if (spec.trees.size() != static_cast<std::size_t>(n)) {
        *why = "trees: " + std::to_string(spec.trees.size()) + " given for " + std::to_string(n) +
               " nodes";
        return std::nullopt;
    }
    std::optional<Topology> topology = make_topology(model, why);
    if (!topology) return std::nullopt;

    AlltoallResult result;
    result.tree = shape != nullptr ? std::string(shape->name) : "given";
    result.packets = static_cast<std::uint32_t>(packets);
    result.multicasts =
        static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(spec.messages) * packets;
    std::vector<plan::Tree> trees = spec.trees;
    if (shape != nullptr) {
        for (Rank origin = 0; origin < n; ++origin) {
            trees.push_back(plan::relabel(shape->build(n, 0), tree_order(*topology, origin)));
        }
    }

    Simulator sim;
    Cluster cluster(model, std::move(*topology), nic::Forwarding::fpfs, sim, trace);
    for (Rank origin = 0; origin < n; ++origin) {
        if (trees[origin].children.size() != static_cast<std::size_t>(n)) {
            *why = "trees[" + std::to_string(origin) + "]: not a tree of " + std::to_string(n) +
                   " nodes";
            return std::nullopt;
        }
    }
    for (int m = 0; m < spec.messages; ++m) {
        for (Rank origin = 0; origin < n; ++origin) cluster.broadcast(trees[origin], spec.bytes, 0);
    }
    result.events = sim.run();

    if (!cluster.error().empty()) {
        *why = "simulation broke an invariant: " + cluster.error();
        return std::nullopt;
    }
    result.totals = cluster.totals();
    result.recoveries = result.totals.recoveries;
    result.recovery_packets = result.totals.recovery_packets;
    std::string quiet;
    if (!cluster.check_quiescent(&quiet)) {
        // No event is left, yet packets are: NICs wait on each other's credits for good.
        for (Rank node = 0; node < n; ++node) {
            auto queues = cluster.nic(node).blocked_queues();
            if (!queues.empty()) result.stuck.push_back({node, std::move(queues)});
        }
        if (model.deadlock_recovery != 0 || result.stuck.empty()) {
            *why = "simulation broke an invariant: " + quiet;
            return std::nullopt;
        }
        result.deadlocked = true;
        return result;
    }
    double sum = 0;
    result.slowest_sender_mbs = -1;
    for (Rank node = 0; node < n; ++node) {
        const auto& receipts = cluster.receipts(node);
        const auto expected =
            static_cast<std::size_t>(n - 1) * static_cast<std::size_t>(spec.messages);
        if (receipts.size() != expected) {
            *why = "simulation broke an invariant: node " + std::to_string(node) + " received " +
                   std::to_string(receipts.size()) + " of " + std::to_string(expected) +
                   " messages";
            return std::nullopt;
        }
        for (const Cluster::Receipt& r : receipts)
            result.done_us = std::max(result.done_us, to_us(r.done));
        const double sender_s = to_us(cluster.last_post(node)) * 1e-6;
        const double mbs =
            sender_s > 0 ? static_cast<double>(spec.bytes) * spec.messages / sender_s / 1e6 : 0;
        sum += mbs;
        if (result.slowest_sender_mbs < 0 || mbs < result.slowest_sender_mbs)
            result.slowest_sender_mbs = mbs;
    }
    result.per_sender_mbs = sum / n;
    const auto multicasts = static_cast<double>(result.multicasts);
    result.recovery_starters = cluster.recovery_starters();
    result.recoveries_per_multicast = static_cast<double>(result.recovery_starters) / multicasts;
    result.recovery_packets_per_multicast =
        static_cast<double>(result.recovery_packets) / multicasts;
    return result;
}

std::string describe_deadlock(const std::vector<StuckNic>& stuck) {
    std::string out;
    for (const StuckNic& s : stuck) {
        if (!out.empty()) out += "; ";
        out += "node " + std::to_string(s.node) + ":";
        bool first = true;
        for (const nic::BlockedQueue& q : s.queues) {
            out += (first ? " to " : ", to ") + std::to_string(q.dst) + " (" +
                   std::to_string(q.packets) + (q.packets == 1 ? " packet)" : " packets)");
            first = false;
        }
    }
    return out;
}

}  // namespace nicsim::sim
