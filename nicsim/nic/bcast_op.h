// A broadcast executing a plan::Tree on one rank's NIC (Kesavan and Panda §3.1, Bhoedjang et al.
// §3): the message is cut into packets of at most `mtu` bytes, the root multicasts packet 0 to its
// children in the tree's order, then packet 1, and so on, and every other rank forwards each
// packet to its children the moment it arrives, from its receive buffer. The NIC's forwarding
// discipline (FPFS or FCFS) orders the sends and its credits pace them (nic.h).
//
// The root's host either hands over the whole message at once (a real job: the NIC sends from
// host memory) or moves it into the NIC packet by packet (supply(); the modeled network's host,
// which pays for each packet's PIO or DMA into a send buffer).
//
// The message buffer is the user's (or a packed copy): the root sends from it, every other rank
// places each packet at its offset in it and forwards from there, so a byte is written once per
// rank and never copied by the NIC. An empty buffer models time only: packets go out with empty
// payloads and headers that announce the bytes they would carry.
//
// Packet encoding: kind bcast, seq the collective, step the packet's index, origin the root,
// flags kLastPacket on the last and the tree's name (tree_flags()) where the op has one; payload
// bytes [step * mtu, min(bytes, (step + 1) * mtu)) of the message. An empty message is one
// packet without payload. A rank takes packets only from its parent and in order, as every
// fabric delivers one sender's packets. A packet flagged kForwardedEarly (the agent forwarded it
// before the host posted the broadcast) is placed, not forwarded again.
#pragma once

#include <cstdint>
#include <span>

#include "nic/nic.h"
#include "nic/operation.h"
#include "plan/tree.h"

namespace nicsim::nic {

// The encoding's limit: the packet index is 32 bits.
constexpr std::uint64_t kBcastMaxPackets = std::uint64_t{1} << 32;

// The flags that name the tree of shape `shape` (its index in plan::tree_shapes()) and `k` on a
// broadcast's packets, or 0 where they cannot (k over 255).
std::uint16_t tree_flags(std::size_t shape, int k);
// The tree a packet's flags name: the shape's index and k; false when they name none.
bool read_tree_flags(std::uint16_t flags, std::size_t* shape, int* k);

// One rank's place in a broadcast tree (spanning the group, labelled with ranks): all its
// broadcasts over that tree read, looked up once per tree.
struct TreePlace {
    TreePlace(Rank rank, const plan::Tree& tree, Nic& nic, std::uint16_t named = 0)
        : parent(tree.parent[rank]),
          root(tree.root),
          named(named),
          children(nic.route(tree.children[rank])) {}

    Rank parent;
    Rank root;
    std::uint16_t named;  // tree_flags() of the tree, or 0
    Nic::Route children;  // as the NIC's peers: each packet goes to them
};

class BcastOp final : public Operation {
public:
    // `place` is `rank`'s in the tree; `message` is empty or `bytes` long; mtu > 0 and
    // packet_count(bytes, mtu) <= kBcastMaxPackets. `host_fed`: the root's packets leave as the
    // host supplies them, none at start().
    BcastOp(Seq seq, Rank rank, const TreePlace& place, std::uint64_t bytes, std::uint32_t mtu,
            std::span<std::byte> message, Nic& nic, CollectiveStats& stats, bool host_fed = false);

    Status start() override;
    Status supply() override;
    Status on_packet(Rank src, const PacketHeader& header,
                     std::span<const std::byte> payload) override;
    std::span<std::byte> placement(Rank src, const PacketHeader& header) override;

private:
    // Whether `header` from `src` is the next packet this rank expects.
    bool expects(Rank src, const PacketHeader& header) const;
    // The header of packet `index`.
    PacketHeader packet_header(std::uint64_t index) const;

    // Two cache lines (core/spares.h), both read by every packet: the counts and names first,
    // then the message and this rank's place in the tree.
    // The root: packets its host has handed over and the NIC multicast; every other rank: the
    // next packet it expects from its parent.
    std::uint64_t next_ = 0;
    std::uint64_t packets_;
    std::uint64_t bytes_;
    std::uint32_t mtu_;
    Rank rank_;
    Seq seq_;
    bool host_fed_;
    Nic& nic_;
    CollectiveStats& stats_;
    std::span<std::byte> message_;
    TreePlace place_;  // this rank's
};

}  // namespace nicsim::nic
