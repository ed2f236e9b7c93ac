// Simulator: broadcasts on a modeled cluster, the experiment behind `nicsim bcast`,
// `nicsim throughput` and `nicsim bench`.
//
// The root's host sends `messages` messages of `bytes` bytes back to back along one tree, each
// one broadcast of the nodes' agents (nic::BcastOp, forwarded by every NIC); every other host
// receives each in full. The tree is laid as the agent lays a real job's: the planner's shape
// along the network's minimal-contention ordering, rotated so the root comes first.
//
// With a skew, one host is late: busy elsewhere until then, as an application's process that is
// descheduled or computing (nicoll-bench --skew measures the same on real jobs). A late root
// starts sending then; a late receiver takes the message then, while its NIC has forwarded it
// down the tree already, unless the hosts forward (--forwarding host).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nic/nic.h"
#include "plan/tree.h"
#include "sim/model.h"
#include "sim/topology.h"
#include "sim/trace.h"

namespace nicsim::sim {

struct BcastSpec {
    Model model;
    std::uint64_t bytes = 0;
    std::string tree = "binomial";  // a plan::tree_shapes() name, or "optimal"
    int k = 0;                      // kbinomial: 0 picks the optimal k (Theorem 3)
    std::string forwarding = "fpfs";  // fpfs, fcfs, or host (the host re-sends, not the NIC)
    Rank root = 0;
    int messages = 1;
    double skew_us = 0;  // how late one host is
    Rank late = -1;      // which (-1: drawn with the model's seed)
};

struct BcastResult {
    std::string tree;  // as built: "binomial", "kbinomial:3", ...
    int depth = 0;
    std::uint32_t packets = 0;     // per message
    double latency_us = 0;         // the first message, as its last receiver sees it
    std::vector<double> done_us;   // per node: when its host had the first message (root: 0)
    Rank late = -1;                // the late host, or -1
    std::vector<double> host_cpu_us;  // per node: its host's time on the messages (ts, PIO, tr)
    double throughput_mbs = 0;     // bytes sent / when the root's host posted its last packet
    nic::NicStats totals;          // over all NICs
    std::uint64_t recovery_starters = 0;   // multicast packets that started a deadlock recovery
    std::vector<std::size_t> peak_buffers;  // per NIC
    std::uint64_t events = 0;
};

// The topology the model describes; empty with one line in *why when it cannot be built.
std::optional<Topology> make_topology(const Model& model, std::string* why);

// The network's minimal-contention ordering of the nodes, rotated so `root` comes first: trees
// are built on it.
std::vector<Rank> tree_order(const Topology& topology, Rank root);

// Whether a skew (how late one host is) is from 0 to 1e9 us; false with one line in *why.
bool skew_fits(double skew_us, std::string* why);
// The host a skew makes late where none is named: drawn with the model's seed.
Rank drawn_late_host(const Model& model);

// Whether messages of `bytes` bytes, `packets` packets each, fit a blast on this model (packet
// numbers, and deadlock recovery's node limit); false with one line in *why.
bool blast_fits(const Model& model, std::uint64_t packets, std::uint64_t bytes, std::string* why);

// Empty with one line in *why for a bad spec (unknown tree, k out of range, root outside the
// cluster) or when the run breaks an invariant (a packet lost, duplicated or out of order,
// credits not conserved, a queue left non-empty), which would be a bug in the engine.
std::optional<BcastResult> run_bcast(const BcastSpec& spec, Trace* trace, std::string* why);

}  // namespace nicsim::sim
