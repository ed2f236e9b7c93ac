// Simulator: allgathers and barriers on a modeled cluster, the experiments behind
// `nicsim allgather` and `nicsim barrier` (Yu et al.).
//
// Every host posts one collective at time 0, except that with `skew` one host, drawn with the
// model's seed, posts that much later. A NIC-based algorithm runs in the NICs' collective agents
// (cluster.h); a host-based one runs the same kind of schedule on the hosts, each step a message
// through the LFC NIC, or GM's protocol with p2p_flow=gm (sim/gm.h), and across the I/O bus both
// ways.
//
//   latency      from the first post to the last host knowing the collective complete
//   bandwidth    bytes each host receives, (N - 1) * B, over the latency
//   host CPU     per node, the time its host is busy on the collective (Yu et al. §6.3: the
//                latency less the longest computation that would not lengthen it). NIC-based: the
//                post (ts), the completion (tr) and the copy out of staged data; host-based: the
//                whole collective, since the host drives every step and polls in between.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nic/operation.h"
#include "sim/gm.h"
#include "sim/model.h"
#include "sim/trace.h"

namespace nicsim::sim {

struct CollectiveSpec {
    Model model;
    std::string algorithm;   // allgather: ab|rd|host-rd|host-ring; barrier: see barrier_names()
    std::uint64_t bytes = 0;  // allgather: each rank's block
    double loss = 0;          // probability that the network loses an allgather packet or NACK
    double skew_us = 0;       // how late one host posts
    bool payloads = false;    // carry real bytes and check every node's result (allgather)
};

struct CollectiveResult {
    std::string algorithm;           // as run ("nic" and "host" resolved for barriers)
    Rank late = -1;                  // the host that posted skew_us late, or -1
    double latency_us = 0;
    double bandwidth_mbs = 0;        // allgather
    std::vector<double> done_us;     // per node: when its host knew the collective complete
    std::vector<double> host_cpu_us; // per node
    std::uint64_t packets = 0;       // every packet the NICs sent (NIC-based: collective
                                     // packets; host-based: data and credit packets, or with
                                     // p2p_flow=gm data packets, resends included, ACKs and NACKs)
    std::uint64_t lost = 0;
    nic::CollectiveStats stats;      // NACKs, retransmissions, duplicates
    GmStats gm;  // host-based with p2p_flow=gm: GM's drops, ACKs, NACKs, resends
    std::uint64_t events = 0;
};

// The barrier algorithms `nicsim barrier` takes: each NIC-based one, its host-based twin
// ("host-" + name), and "nic" and "host", the one with the fewest rounds.
std::vector<std::string> barrier_names();

// Empty with one line in *why for a bad spec, or when the run breaks an invariant (a node never
// completes, a byte of a result is wrong), which would be a bug in the engine.
std::optional<CollectiveResult> run_allgather(const CollectiveSpec& spec, Trace* trace,
                                              std::string* why);
std::optional<CollectiveResult> run_barrier(const CollectiveSpec& spec, Trace* trace,
                                            std::string* why);

}  // namespace nicsim::sim
