// The wire format of an engine packet: a fixed 24-byte header, then an optional payload.
//
//   byte 0      2     3     4          8          12         16     18       20          24
//        +------+-----+-----+----------+----------+----------+------+--------+-----------+-------
//        |magic |ver  |kind | seq      | step     | origin   |flags |credits |payload len| payload
//        +------+-----+-----+----------+----------+----------+------+--------+-----------+-------
//
// Fields are in host byte order: every process of an MPI job runs on the same architecture.
// `seq` names the collective or message (its position in its sender's or group's call order),
// `step` the position of the packet within it (a barrier step, a packet index), `origin` the
// rank whose broadcast tree the packet travels on. `credits` returns receive buffers to the
// packet's receiver (Bhoedjang et al. §3.1: piggybacked, or the whole point of a credit packet).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/hot.h"
#include "core/status.h"

namespace nicsim {

enum class PacketKind : std::uint8_t {
    barrier = 1,
    unicast = 3,    // a host's message, delivered to the receiving host only
    credit = 4,     // an explicit credit update, no payload
    allgather = 5,  // a piece of an allgather's blocks (nic/allgather_op.h says which)
    nack = 6,       // asks the receiver to send again the allgather packet it names, no payload
    bcast = 7,      // a piece of a broadcast message, forwarded along the origin's tree by
                    // every NIC it reaches (nic/bcast_op.h says which)
    recovery_ack = 8,  // a deadlocked subtree's channels are free again; origin: the channel's
                       // owner (Bhoedjang et al. §4.2, nic/deadlock_recovery.h)
    abort = 9,      // the sender could not take part in collective `seq` (nic/abort_op.h)
};

// flags
constexpr std::uint16_t kLastPacket = 1;  // the last packet of its message
// Travels in a deadlock channel (Bhoedjang et al. §4.2). Outside any window, it carries no credits:
// `credits` holds instead the rank of the channel's owner (so ranks below 65536).
constexpr std::uint16_t kDeadlockFlag = 2;
// On an abort: the sender's group is broken (a transport error), not only collective `seq`.
constexpr std::uint16_t kGroupBroken = 4;
// On a broadcast's packet: its tree is named in the flags, the shape's index in
// plan::tree_shapes() in kTreeShapeBits and its k (0 for a shape without one) in kTreeKBits,
// so that a rank whose host has not posted the broadcast yet can forward it (nic/agent.h). Not
// on the packets of a tree a driver laid (the modeled network's).
constexpr std::uint16_t kTreeNamed = 8;
constexpr std::uint16_t kTreeShapeBits = 0x70;  // bits 4-6
constexpr std::uint16_t kTreeKBits = 0xff00;     // bits 8-15
// Never on the wire: an early packet the agent has already forwarded (nic/agent.h).
constexpr std::uint16_t kForwardedEarly = 0x80;
// On an allgather's packet (which names no tree): sent again in answer to a NACK
// (nic/allgather_op.h).
constexpr std::uint16_t kResent = 0x100;

struct PacketHeader {
    static constexpr std::uint16_t kMagic = 0x4e43;  // "NC"
    static constexpr std::uint8_t kVersion = 2;
    static constexpr std::size_t kBytes = 24;

    PacketKind kind = PacketKind::barrier;
    Seq seq = 0;
    std::uint32_t step = 0;
    Rank origin = 0;
    std::uint16_t flags = 0;
    std::uint16_t credits = 0;
    std::uint32_t payload_bytes = 0;

    std::array<std::byte, kBytes> encode() const;
    // Empty when `bytes` is too short, has a foreign magic or version, an unknown kind, or a
    // payload length that disagrees with the packet length.
    static std::optional<PacketHeader> decode(std::span<const std::byte> bytes);
    // The header alone (the first kBytes of `bytes`), its payload carried elsewhere: empty when
    // `bytes` is too short or has a foreign magic or version, or an unknown kind.
    static std::optional<PacketHeader> decode_header(std::span<const std::byte> bytes);

    friend bool operator==(const PacketHeader&, const PacketHeader&) = default;
};

// Packets a message of `bytes` bytes is cut into with `mtu` payload bytes each, mtu > 0: one,
// header only, for an empty message. (A message of one packet, the common case on a call's
// path, costs no division.)
constexpr std::uint64_t packet_count(std::uint64_t bytes, std::uint64_t mtu) {
    return bytes <= mtu ? 1 : (bytes + mtu - 1) / mtu;
}


}  // namespace nicsim
