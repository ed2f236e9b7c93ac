// Simulator: FM/MC, the multicast protocol Bhoedjang et al. compares LFC with (§2.2, §3.3, §5.3),
// as a comparator on the same modeled cluster. It is a baseline, not engine protocol: the component
// never runs it, so it lives here beside the host-based baselines rather than in nic/.
//
//   host ── needs a multicast credit per packet (a buffer on every receiving host): credits come
//           in batches from the central credit manager on node 0's NI (request, reply), cached
//   host ── PIO of a fixed 256-byte packet (the first carries 4 bytes less, the handler) ──▶ NI
//   NI   ── no NI-level flow control: sends at once, to each child of the sender's binary tree
//   NI   ◀── one receive queue for every sender; when it is full, part of it is swapped to host
//           memory across the I/O bus and copied back later
//   NI   ── DMA to a host multicast buffer; the host frees it once it has the packet
//   token ── visits every NI in turn while credits are out, collecting how many buffers each host
//           freed; back at the manager, the credits every host has freed are available again
//
// Unicast (host-level sliding windows between hosts) has no part in these benchmarks and is not
// modeled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/model.h"

namespace nicsim::sim {

// FM/MC's own values, each with its source (Bhoedjang et al. gives few; the rest are assumptions).
struct FmmcParams {
    // Bhoedjang et al. §5.3: fixed-size 256-byte packets.
    int packet_bytes = 256;
    // Bhoedjang et al. §5.3 note 2: one word of a message's first packet names its handler.
    int handler_bytes = 4;
    // calibrated: multicast buffers per host (9 KB), the credit manager's pool, so that FM/MC's
    // single-sender peak on 61 nodes is near Bhoedjang et al. §5.3's 7.7 MB/s.
    int host_buffers = 36;
    // assumed: credits a host asks for at once (Bhoedjang et al. §2.2: hosts "request multiple
    // credits and cache them"); it asks for the next batch when half of one is spent.
    int credit_batch = 16;
    // assumed: the NI's one receive queue, 16 KB of LANai SRAM (Bhoedjang et al. §2.2).
    int ni_queue = 64;
    // assumed: FM/MC's NI cost per packet as a fraction of LFC's tns and tnr (Bhoedjang et al.
    // §5.3: LFC's per-packet overheads are "slightly higher"). A credit request, reply or token is
    // a packet like any other: the NI pays its costs, and it waits in the NI's one transmit queue
    // behind the data before it.
    double ni_cost = 0.8;
};

struct FmmcSpec {
    Model model;
    FmmcParams params;
    std::uint64_t bytes = 0;
    int messages = 1;
    Rank root = 0;
    bool all_senders = false;  // every node multicasts (all-to-all), not only `root`
};

struct FmmcResult {
    std::uint32_t packets = 0;  // per message
    double latency_us = 0;      // the first message of the (first) sender, its last receiver
    double per_sender_mbs = 0;  // mean over senders: bytes / when its host posted its last packet
    std::uint64_t credit_requests = 0;
    std::uint64_t token_hops = 0;
    std::uint64_t swapped = 0;  // packets swapped out to host memory (and back)
    std::uint64_t data_packets = 0;
    std::uint64_t events = 0;
};

// Empty with one line in *why for a bad spec, or when the run breaks an invariant (a host missing
// a packet), which would be a bug in the model.
std::optional<FmmcResult> run_fmmc(const FmmcSpec& spec, std::string* why);

}  // namespace nicsim::sim
