// Simulator: a Quadrics network (Coll et al. §2-3): Elan NICs on a quaternary fat tree whose
// switches replicate a packet to a range of adjacent nodes.
//
// A transaction carries a message from one node to a range of nodes (a hardware multicast, which
// climbs to the range's root switch and is replicated down the broadcast tree) or to one node (a
// unicast on its minimal route). Each packet is cut through its links as one worm:
//
//   host ── ts ──▶ NIC ── tns, then the payload by DMA across the PCI bus ──▶ the worm
//   worm ── starts when every link of its path (a tree for a multicast) is free as its head gets
//           there; each link busy for the packet's length; a switch adds its latency to the head
//   NIC  ◀── tnr, the payload by DMA to the host; the host learns of the whole message after tr
//   ack  ── every destination acknowledges each packet; the switches combine the acks on the way
//           back (the worst one wins), so the source sees one per packet
//
// So two multicasts that need the same output port of a switch (or any other link) go one after
// the other, and those on disjoint links in parallel. A transaction can run on the NIC alone
// (on_nic: no host costs at either end), as the Elan's barrier tests and thread-forwarded
// releases do. A test carries no data: each destination answers it with the state of its own
// barrier, and the source learns whether all answered yes.
//
// Acks are a few bytes on the links opposite to the data's, so they take the switches' latency
// but are not modeled as occupying links. Each resource (host, NIC, PCI bus, link) is reserved
// first come, first served, and keeps the time it is busy until, as in cluster.h.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/fattree.h"
#include "sim/model.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace nicsim::sim {

// What the collectives on the network are told.
class HwMulticastUser {
public:
    // `node`'s host (or, on_nic, its NIC) has the whole message of transaction `tx`.
    virtual void delivered(Rank node, std::uint32_t tx, Time at) = 0;
    // The source of `tx` has every packet's combined acknowledgement; positive unless a
    // destination answered a test with no.
    virtual void acknowledged(Rank source, std::uint32_t tx, bool positive, Time at) = 0;
    // A test of `tx` reaches `node`'s NIC now: its answer.
    virtual bool test(Rank node, std::uint32_t tx) = 0;

protected:
    ~HwMulticastUser() = default;
};

class HwMulticastNetwork final : public EventHandler {
public:
    // `trace` may be null. The model's nodes sit on the smallest quaternary fat tree that holds
    // them (switch_ports / 2 links down per switch).
    HwMulticastNetwork(const Model& model, Simulator& sim, Trace* trace, HwMulticastUser& user);

    const plan::FatTree& tree() const { return tree_; }

    struct Send {
        Rank source = 0;
        plan::NodeRange dest;    // a unicast when !multicast (dest.lo == dest.hi != source)
        bool multicast = true;
        std::uint64_t bytes = 0;
        bool on_nic = false;     // no host overheads: the NIC posts and receives it
        bool test = false;       // a barrier test: no data, each destination answers
    };
    // Starts a transaction at `at` (not before now); its number, for the user's callbacks.
    std::uint32_t post(const Send& send, Time at);

    void on_event(std::uint32_t kind, std::uint32_t arg) override;

    std::uint64_t packets() const { return packets_; }
    // The time `node`'s host was busy (ts and tr).
    Time host_busy(Rank node) const { return host_busy_[static_cast<std::size_t>(node)]; }

private:
    struct Transaction {
        Send send;
        std::uint32_t packets = 0;
        std::uint32_t injected = 0;            // packets put on the network
        std::vector<std::uint32_t> got;        // per destination (index from dest.lo): packets in
        std::uint64_t outstanding = 0;         // destination packets not yet acknowledged
        Time ack_at = 0;                       // the latest acknowledgement so far
        bool positive = true;
    };
    struct Arrival {
        std::uint32_t tx;
        Rank node;
        Time ack_back;  // the ack's way back to the source, once the NIC has the packet
    };

    void inject(std::uint32_t tx);
    void arrive(const Arrival& a);
    // Reserves `busy_until` from max(at, busy_until) for `length`; returns the end.
    Time reserve(Time& busy_until, Time at, Time length, Trace::Track track, std::uint32_t id,
                 const char* what);
    std::uint32_t payload(const Transaction& t, std::uint32_t packet) const;

    Model model_;
    plan::FatTree tree_;
    Simulator& sim_;
    Trace* trace_;
    HwMulticastUser& user_;
    std::vector<Time> host_free_, nic_free_, bus_free_, link_free_;
    std::vector<Time> host_busy_;
    std::vector<Transaction> txs_;
    std::vector<Arrival> arrivals_;
    std::vector<std::uint32_t> free_arrivals_;
    std::vector<plan::FatLink> path_;
    std::vector<int> hops_;
    std::uint64_t packets_ = 0;
};

}  // namespace nicsim::sim
