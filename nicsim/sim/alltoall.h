// Simulator: all-to-all multicast (Bhoedjang et al. §5.2, Table 1, Fig. 6 right), the experiment
// behind `nicsim alltoall`.
//
// Every node's host multicasts `messages` messages of `bytes` bytes at once, each a broadcast of
// the nodes' agents along its own tree (the tree shape rooted at that node, on the network's
// ordering rotated to it), so every
// NIC forwards for many origins and, on trees that are not deadlock-free, NICs can wait on each
// other's credits for good. With deadlock recovery on (model deadlock_recovery=1) the run always
// completes; with it off, a run that stops with packets still queued is reported as a deadlock:
// the simulator stops once no event is left, so it cannot hang.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nic/nic.h"
#include "plan/tree.h"
#include "sim/model.h"
#include "sim/trace.h"

namespace nicsim::sim {

struct AlltoallSpec {
    Model model;
    std::uint64_t bytes = 0;
    std::string tree = "binomial";  // binomial|binary|chain|flat
    int messages = 1;               // per node
    // Instead of a named shape: one tree per origin, children by node (property tests).
    std::vector<plan::Tree> trees;
};

// A NIC that holds packets it can never send: its blocked-sends queues.
struct StuckNic {
    Rank node;
    std::vector<nic::BlockedQueue> queues;
};

struct AlltoallResult {
    std::string tree;
    std::uint32_t packets = 0;     // per message
    std::uint64_t multicasts = 0;  // multicast packets: nodes x messages x packets
    double per_sender_mbs = 0;     // mean over senders: bytes sent / its host's last post
    double slowest_sender_mbs = 0;
    double done_us = 0;                   // the last host to have every message
    std::uint64_t recoveries = 0;         // deadlock recoveries started, over all NICs
    std::uint64_t recovery_packets = 0;   // packets sent in deadlock channels
    std::uint64_t recovery_starters = 0;  // multicast packets that started a recovery somewhere
    double recoveries_per_multicast = 0;  // Table 1, column 1: recovery_starters / multicasts
    double recovery_packets_per_multicast = 0;  // Table 1, column 2
    nic::NicStats totals;
    std::uint64_t events = 0;
    bool deadlocked = false;      // recovery off, and packets stayed queued
    std::vector<StuckNic> stuck;  // then: the NICs and queues involved
};

// Empty with one line in *why for a bad spec or a broken invariant (a packet lost, duplicated or
// out of order, credits not conserved), which would be a bug in the engine; a deadlock with
// recovery off is a result, not an error.
std::optional<AlltoallResult> run_alltoall(const AlltoallSpec& spec, Trace* trace,
                                           std::string* why);

// One line naming every stuck NIC and its queues: "node 3: to 4 (2 packets); node 4: ...".
std::string describe_deadlock(const std::vector<StuckNic>& stuck);

}  // namespace nicsim::sim
