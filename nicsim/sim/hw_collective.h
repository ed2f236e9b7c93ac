// Simulator: broadcast and barrier on a Quadrics network with faulty nodes (Coll et al. §6), the
// experiments behind `nicsim bcast` and `nicsim barrier` on the fattree topology.
//
// The nodes taking part are those not in `faulty`. Three trees carry the collective:
//   hardware  one hardware multicast to all of them; only when they are adjacent
//   hwtree    a hardware-based multicast tree (plan/hwtree.h): steps of parallel multicasts
//   software  QsNet's fallback: a balanced tree of unicast messages, fan-out 4 as the network's
//             switches (Coll et al. does not give it), over the nodes in order from the root on
//
// Broadcast: the root's host sends the message; a node that has it sends it on along its part of
// the tree, one transaction after the other, from its host (as the QsNet library does).
// Barrier over hardware multicast (hardware, hwtree) runs on the NICs, with the Elan's
// test-and-set: every host tells its NIC it has arrived (ts); a node that sends multicasts in the
// tree tests each of its groups, last step first, with a multicast whose acknowledgements say
// whether every node of the group is ready, and tests again until they are; a node is ready once
// it has arrived and all its groups answered yes. When the root is ready it multicasts the
// release down the same tree, each NIC forwarding it, and each host learns of it (tr).
// Barrier over the software tree: unicast messages from host to host, up the tree, then down.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/hwtree.h"
#include "sim/model.h"
#include "sim/rng.h"
#include "sim/trace.h"

namespace nicsim::sim {

struct HwCollectiveSpec {
    Model model;                   // topology fattree
    std::string tree = "hwtree";   // hwtree | software | hardware
    std::string planner = "greedy";  // hwtree: a plan::hw_tree_planners() name
    std::vector<Rank> faulty;
    Rank root = 0;
    std::uint64_t bytes = 0;       // broadcast
};

struct HwCollectiveResult {
    std::string tree;
    int depth = 0;                   // steps of multicasts, or levels of the software tree
    plan::HwTree plan;               // hardware and hwtree: the multicasts of each step
    double latency_us = 0;           // the last node done
    std::vector<double> done_us;     // per node; -1 for a faulty node
    double bandwidth_mbs = 0;        // broadcast: bytes over the latency
    std::uint64_t packets = 0;       // worms put on the network (a multicast packet counts once)
    std::uint64_t tests = 0;         // barrier: test multicasts, retries included
    std::uint64_t events = 0;
};

// The names `--tree` takes on a fattree network.
inline constexpr const char* kHwTreeNames = "hwtree|software|hardware";

// `count` distinct faulty nodes of 0..nodes-1, never `keep` (the source), drawn with `rng`, in
// increasing order. count <= nodes - 1.
std::vector<Rank> random_faults(Rank nodes, std::int64_t count, Rank keep, Rng& rng);

// Empty with one line in *why for a bad spec: a root or faulty node outside the network, a
// faulty root, an unknown tree or planner, hardware multicast over nodes that are not adjacent;
// or when a node never completes, which would be a bug.
std::optional<HwCollectiveResult> run_hw_bcast(const HwCollectiveSpec& spec, Trace* trace,
                                               std::string* why);
std::optional<HwCollectiveResult> run_hw_barrier(const HwCollectiveSpec& spec, Trace* trace,
                                                 std::string* why);

}  // namespace nicsim::sim
