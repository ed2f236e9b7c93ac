// The global collective channels (Yu et al. §4.2, §5.1): where a NIC keeps the payload of a packet
// whose collective its host has not posted yet, so that a fast rank's data is neither dropped
// nor made to wait for a slow host.
//
// A host buffer is cut into `count` channels of `bytes` each. Collective s uses channel
// s mod count; every rank numbers collectives alike, so all NICs agree on the order without a
// word. Early payloads of s are appended to its channel, and the host copies them out when it
// posts s. The channel then holds nothing of use, but it is not free: Yu et al. §5 reuses a
// channel only after a barrier-based synchronisation shows every rank done with the collective
// that used it, or a rank running ahead could overwrite packets a slow host has not copied out
// yet. The driver reports that synchronisation with recycle(s): every rank has completed s and
// everything before it. Until then a payload of another collective is refused, as is one that
// does not fit: the NIC drops the packet and the receiver-driven retransmission of
// allgather_op.h brings it back once the host has posted.
//
//   seq       0  1  2  3  4  5  6  7        count = 4, recycle(1) reported: seqs 2, 3, 4 and 5
//   channel   0  1  2  3  0  1  2  3        may store; 6 and 7 wait for recycle(3)
//
// A payload-less packet (a barrier token, an allgather of 0-byte blocks) needs no room and is
// always kept: its header stays with the NIC, which is the agent's business. Memory is taken as
// payloads arrive, never beyond count x bytes, so a run that models only time (empty payloads,
// sizes accounted) takes none.
//
// A real job has no retransmission to fall back on: there the channels are `unbounded`, and the
// agent keeps every early payload in memory of its own (a room, agent.h), however many, until
// the host has copied it out; these channels then hold nothing. Flow control (nic.h) still
// bounds what is in flight; what arrives early is bounded, as in MPI's own unexpected-message
// queue, only by what the peers send before this rank posts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/status.h"

namespace nicsim::nic {

struct ChannelConfig {
    std::size_t count = 4;          // channels: the collectives that may be ahead of the host
    std::size_t bytes = 64 * 1024;  // bytes of payload one channel holds
    bool unbounded = false;         // the agent keeps every early payload (count, bytes unused)
};

class Channels {
public:
    // A kept payload: bytes [offset, offset + length) of its channel. length is 0 when only the
    // size was accounted (an empty payload, time modelled without data).
    struct Slice {
        std::size_t offset = 0;
        std::size_t length = 0;
    };

    explicit Channels(const ChannelConfig& config);

    // Whether the agent keeps every early payload itself (a real job).
    bool unbounded() const { return unbounded_; }

    // Keeps the payload of an early packet of collective `seq`: `payload` is empty or
    // payload_bytes long. nullopt when the channel is full or still holds another collective
    // (always, for a payload, when unbounded: the agent keeps those).
    std::optional<Slice> store(Seq seq, std::uint32_t payload_bytes,
                               std::span<const std::byte> payload);

    // A kept payload of `seq`, valid until recycle() frees its channel.
    std::span<const std::byte> read(Seq seq, Slice slice) const;

    // Every rank has completed `seq` and every collective before it: their channels are free.
    void recycle(Seq seq);

private:
    struct Channel {
        Seq owner = 0;
        bool free = true;
        std::size_t used = 0;
        std::vector<std::byte> data;
    };

    std::size_t bytes_;
    bool unbounded_;
    std::vector<Channel> channels_;
};

}  // namespace nicsim::nic
