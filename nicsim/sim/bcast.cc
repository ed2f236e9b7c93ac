#include "sim/bcast.h"

#include <algorithm>

#include "plan/barrier.h"
#include "plan/kbinomial.h"
#include "plan/ordering.h"
#include "sim/cluster.h"
#include "sim/hw_collective.h"
#include "sim/rng.h"
#include "sim/simulator.h"

namespace nicsim::sim {

std::optional<Topology> make_topology(const Model& model, std::string* why) {
    if (model.topology == "hypercube")
        return Topology::hypercube(model.nodes, model.switch_ports, why);
    if (model.topology == "fattree") {
        *why = "topology fattree: takes --tree " + std::string(kHwTreeNames) +
               " (sim/hw_collective.h)";
        return std::nullopt;
    }
    if (model.topology == "irregular") {
        return Topology::irregular(model.nodes, model.switch_ports, model.hosts_per_switch,
                                   model.seed, why);
    }
    return Topology::crossbar(model.nodes);
}

bool skew_fits(double skew_us, std::string* why) {
    if (skew_us >= 0 && skew_us <= 1e9) return true;
    *why = "--skew " + std::to_string(skew_us) + ": must be from 0 to 1e9 us";
    return false;
}

Rank drawn_late_host(const Model& model) {
    return static_cast<Rank>(Rng(model.seed, 0x5e3).below(model.nodes));
}

bool blast_fits(const Model& model, std::uint64_t packets, std::uint64_t bytes, std::string* why) {
    if (model.deadlock_recovery != 0 && model.nodes > 65536) {
        *why = "nodes=" + std::to_string(model.nodes) +
               ": deadlock recovery takes at most 65536 nodes";
        return false;
    }
    if (packets > 0xffffffffULL) {
        *why = "--bytes " + std::to_string(bytes) + ": more than 2^32 packets";
        return false;
    }
    return true;
}

std::vector<Rank> tree_order(const Topology& topology, Rank root) {
    plan::SwitchNetwork network;
    for (int node = 0; node < topology.nodes(); ++node) {
        network.switch_of_node.push_back(topology.switch_of(node));
    }
    network.neighbours = topology.switch_neighbours();
    return plan::rotate_to(plan::switch_ordering(network), root);
}

namespace {

// Theorem 3 with this model's costs: a hop is a NIC's send, the wire and the next NIC's receive;
// a copy costs the sender its send time (in steps, the whole hop), for the last packet on the
// largest fanout.
int timed_optimal_k(const Model& model, const Topology& topology, Rank root, std::int64_t packets) {
    const double wire = static_cast<double>(model.mtu + model.header_bytes) / model.link_bw;
    double switches = 0;
    for (Rank node = 0; node < topology.nodes(); ++node) {
        if (node != root) switches += topology.switch_hops(root, node);
    }
    if (topology.nodes() > 1) switches /= topology.nodes() - 1;
    const double send = model.tns + wire;
    const double hop = send + switches * model.switch_latency + model.tnr;
    return plan::optimal_k_timed(topology.nodes(), packets, hop,
                                 model.nic_timing == "steps" ? hop : send);
}

}  // namespace

std::optional<BcastResult> run_bcast(const BcastSpec& spec, Trace* trace, std::string* why) {
    const Model& model = spec.model;
    const Rank n = model.nodes;
    if (spec.root < 0 || spec.root >= n) {
        *why =
            "--root " + std::to_string(spec.root) + ": not a node of 0.." + std::to_string(n - 1);
        return std::nullopt;
    }
    if (!skew_fits(spec.skew_us, why)) return std::nullopt;
    if (spec.late < -1 || spec.late >= n) {
        *why =
            "--late " + std::to_string(spec.late) + ": not a node of 0.." + std::to_string(n - 1);
        return std::nullopt;
    }
    if (spec.messages < 1) {
        *why = "--messages " + std::to_string(spec.messages) + ": must be at least 1";
        return std::nullopt;
    }
    nic::Forwarding forwarding = nic::Forwarding::fpfs;
    if (spec.forwarding == "fcfs") {
        forwarding = nic::Forwarding::fcfs;
    } else if (spec.forwarding != "fpfs" && spec.forwarding != "host") {
        *why = "--forwarding " + spec.forwarding + ": not one of fpfs|fcfs|host";
        return std::nullopt;
    }
    if (spec.forwarding == "host" && model.p2p_flow == "gm") {
        *why =
            "--forwarding host: p2p_flow=gm is not modeled for broadcasts (their counters and "
            "the sender's throughput are LFC's); set p2p_flow=credits";
        return std::nullopt;
    }
    if (model.deadlock_recovery != 0 && spec.forwarding != "fpfs") {
        *why = "--forwarding " + spec.forwarding + ": deadlock recovery runs with fpfs only";
        return std::nullopt;
    }
    const std::uint64_t packets = packet_count(spec.bytes, model.mtu);
    if (!blast_fits(model, packets, spec.bytes, why)) return std::nullopt;

    BcastResult result;
    result.packets = static_cast<std::uint32_t>(packets);
    const plan::TreeShape* shape =
        plan::find_tree_shape(spec.tree == "optimal" ? "kbinomial" : spec.tree);
    if (shape == nullptr) {
        *why =
            "--tree " + spec.tree + ": not one of binomial|binary|chain|flat|kbinomial[:K]|optimal";
        return std::nullopt;
    }
    int k = 0;
    if (shape->takes_k) {
        const int k_max = std::max(1, plan::ceil_log2(n));
        k = spec.k;  // 0: chosen below, once the topology's costs are known
        if (k < 0 || k > k_max) {
            *why = "--tree kbinomial:" + std::to_string(spec.k) + ": k out of range 1.." +
                   std::to_string(k_max) + " for " + std::to_string(n) + " nodes";
            return std::nullopt;
        }
    }

    std::optional<Topology> topology = make_topology(model, why);
    if (!topology) return std::nullopt;
    const std::vector<Rank> order = tree_order(*topology, spec.root);
    if (shape->takes_k && k == 0) {
        k = timed_optimal_k(model, *topology, spec.root,
                            static_cast<std::int64_t>(packets) * spec.messages);
    }
    result.tree = shape->takes_k ? "kbinomial:" + std::to_string(k) : std::string(shape->name);
    const plan::Tree tree = plan::lay_along(shape->build(n, k), order);
    result.depth = plan::depth(tree);

    Simulator sim;
    Cluster cluster(model, std::move(*topology), forwarding, sim, trace);
    Time start = 0;  // when the root's host starts
    if (spec.skew_us > 0) {
        result.late = spec.late >= 0 ? spec.late : drawn_late_host(model);
        if (result.late == spec.root) {
            start = from_us(spec.skew_us);
        } else {
            cluster.hold_host(result.late, from_us(spec.skew_us));
        }
    }
    if (spec.forwarding == "host") {
        for (Rank node = 0; node < n; ++node) {
            cluster.set_host_route(node, spec.root, tree.children[node]);
        }
    }
    for (int m = 0; m < spec.messages; ++m) {
        if (spec.forwarding == "host") {
            for (const Rank child : tree.children[spec.root]) {
                cluster.send(spec.root, child, static_cast<Seq>(m), spec.bytes, start);
            }
        } else {
            cluster.broadcast(tree, spec.bytes, start);
        }
    }
    result.events = sim.run();

    if (!cluster.error().empty()) {
        *why = "simulation broke an invariant: " + cluster.error();
        return std::nullopt;
    }
    if (!cluster.check_quiescent(why)) {
        *why = "simulation broke an invariant: " + *why;
        return std::nullopt;
    }
    result.done_us.assign(static_cast<std::size_t>(n), 0.0);
    for (Rank node = 0; node < n; ++node) {
        result.peak_buffers.push_back(cluster.nic(node).stats().peak_buffers);
        result.host_cpu_us.push_back(to_us(cluster.host_busy(node)) / spec.messages);
        if (node == spec.root) continue;
        const auto& receipts = cluster.receipts(node);
        if (receipts.size() != static_cast<std::size_t>(spec.messages)) {
            *why = "simulation broke an invariant: node " + std::to_string(node) + " received " +
                   std::to_string(receipts.size()) + " of " + std::to_string(spec.messages) +
                   " messages";
            return std::nullopt;
        }
        result.done_us[node] = to_us(receipts.front().done);
        result.latency_us = std::max(result.latency_us, result.done_us[node]);
    }
    const double sender_s = to_us(cluster.last_post(spec.root)) * 1e-6;
    if (sender_s > 0) {
        result.throughput_mbs =
            static_cast<double>(spec.bytes) * spec.messages / sender_s / 1e6;
    }
    result.totals = cluster.totals();
    result.recovery_starters = cluster.recovery_starters();
    return result;
}

}  // namespace nicsim::sim
