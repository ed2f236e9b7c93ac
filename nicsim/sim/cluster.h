// Simulator: the simulated machine, the sim fabric the engine's NIC agent runs on.
//
// Each node is a host and a NIC on a topology. The NIC is the engine's nic::Nic, unchanged; this
// file gives it a Fabric and a HostPort that charge time:
//
//   host ── ts per message, then per packet: PIO (host and I/O bus busy) or DMA (bus busy) ──▶ NIC
//   NIC  ── tns per packet sent, then until it is on the wire; tnr per packet received;
//           one thing at a time ──▶ links
//   link ── busy while a packet crosses it; a switch adds its latency to the packet's head
//   NIC  ── DMA across the I/O bus ──▶ host: tr once the message's last packet is in
//
// Every resource keeps the time it is busy until and is reserved first come, first served, so a
// packet costs one event (its arrival at the next NIC). The NIC works on its own timeline, which
// runs ahead of the event clock while the NIC is busy: work that arrives meanwhile queues behind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nic/nic.h"
#include "sim/model.h"
#include "sim/simulator.h"
#include "sim/topology.h"
#include "sim/trace.h"

namespace nicsim::sim {

class Cluster {
public:
    // A message a host received in full: its origin, its number and when the host had it
    // (tr included).
    struct Receipt {
        Rank origin;
        Seq seq;
        Time done;
    };

    // `trace` may be null.
    Cluster(const Model& model, Topology topology, nic::Forwarding forwarding, Simulator& sim,
            Trace* trace);
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    Rank size() const { return static_cast<Rank>(nodes_.size()); }
    const Topology& topology() const { return topology_; }
    const nic::Nic& nic(Rank node) const;

    // Multicast packets from `origin` go on from `node`'s NIC to `children` (NIC forwarding)...
    void set_route(Rank node, Rank origin, std::span<const Rank> children);
    // ...or reach `node`'s host, which sends the whole message on to `children` (host forwarding).
    void set_host_route(Rank node, Rank origin, std::span<const Rank> children);

    // `node`'s host starts sending message `seq` of `bytes` bytes at time `at`, to `dst` or, with
    // nic::Nic::kMulticast, along its own multicast tree. Messages leave in the order given.
    void send(Rank node, Rank dst, Seq seq, std::uint64_t bytes, Time at);

    const std::vector<Receipt>& receipts(Rank node) const;
    // When `node`'s host handed the last packet of its last message to its NIC.
    Time last_post(Rank node) const;

    // Empty while the run is sound; otherwise the first thing that went wrong (a NIC refused a
    // packet, a host got packets out of order).
    const std::string& error() const { return error_; }
    // After the run: every NIC idle, every host done, and for every pair of NICs the sender's
    // credits plus the receiver's unreturned ones equal the window. False with the first
    // violation in *why.
    bool check_quiescent(std::string* why) const;

    // Totals over all NICs; peak_buffers is the largest of any one NIC.
    nic::NicStats totals() const;

private:
    class Node;
    struct Flight {
        Rank src;
        Rank dst;
        PacketHeader header;
    };

    // The packet is ready to leave `src`'s NIC at `leave`: reserves the links on its way,
    // schedules its arrival at `dst` and returns when its tail has left the NIC.
    Time launch(Rank src, Rank dst, std::span<const LinkId> path, const PacketHeader& header,
                Time leave);
    void fail(std::string what);

    Model model_;
    Topology topology_;
    Simulator& sim_;
    Trace* trace_;
    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<Time> link_free_;
    std::vector<Flight> flights_;
    std::vector<std::uint32_t> free_flights_;
    std::string error_;
};

}  // namespace nicsim::sim
