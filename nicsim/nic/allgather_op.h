// An allgather executing a plan::AllgatherSchedule on one rank's NIC (Yu et al. §4, §5.2).
//
// The result buffer is the gathered buffer of plan/allgather.h: one block of B bytes per rank,
// origin o's at byte o * B, this rank's own block in place when the collective is posted, or
// given apart (`own`): then its first packets leave from there and the op copies it into place
// after them, so a peer reading it (a fabric that receives by reading the sender's memory) reads
// memory this rank does not write meanwhile. Every
// arriving piece is written where it belongs, and every packet is sent from there: a block
// reaches this host once and leaves it as often as the schedule (or a NACK) asks, without
// another copy (only a combined packet whose pieces lie apart is gathered first). An empty result
// buffer models time only: packets go out with empty payloads and headers that announce the
// bytes they would carry, and arrive the same way.
//
// The algorithm says how blocks move:
//
//   combining (rd)  step by step, like a barrier. Entering step k the rank sends each of the
//                   step's transfers, cut by pack(), and moves on once every packet of the step's
//                   receive is in. Packets of later steps may come first; they are placed at once.
//   hopping (ab)    each block travels in packets of its own, each carrying its origin i. The
//                   moment a packet arrives it goes on, as is, along this rank's hops of i: the
//                   schedule's sends that name i, in step order (the tree of i, plan/allgather.h);
//                   the origin sends its own along its hops at once. The steps only say which
//                   origins come from which peer.
//
// Packet encoding. Data packets are of kind allgather:
//
//   seq      the collective
//   step     31         24 23                                     0
//            +------------+---------------------------------------+
//            |  step k    |  packet index                         |
//            +------------+---------------------------------------+
//            k: the schedule step (hopping: of the send that carries the packet, which is the
//            step of the receive that brings it). index: combining, among pack() of step k's
//            transfer; hopping, among pack({i, 1}) of block i
//   origin   combining: the sender; hopping: i, the block's origin
//   flags    kResent on a packet sent again in answer to a NACK, and on its forwards
//   payload  the packet's pieces of the gathered buffer back to back (plan::Packet), or empty
//            when only time is modelled; payload_bytes is their length either way
//
// The receiver's own schedule says which blocks step k brings from which peer, so (step, origin,
// index) locates the bytes and the packet's bit in the step's Arrivals; a second copy finds its
// bit set and is dropped.
//
// Reliability is receiver-driven (Yu et al. §4.3.1): nothing is acknowledged. When the driver
// deems packets overdue it calls on_timeout() (through Agent::timeout()), and the op sends NACKs
// for missing packets, each to the peer it expects the packet from: a payload-less packet of
// kind nack with the missing packet's seq, step and origin. A combining rank asks only for its
// current step (the senders of later steps may not be there yet); a hopping rank for every
// step still incomplete. Packets that leave their sender in order form a stream (a combining
// step's transfer; a block on its hop): a packet missing before the last one in is lost, and
// is asked for; the packets missing after it may be on their way (the sender in the middle of
// the step or not there yet, a block's parent with hundreds of packets queued for other ranks
// first), and the stream's last packet alone stands for them. Asking for each of them, every
// round, kept both NICs busy with nothing else (17 ranks of 1563 packets each never finished).
// A round that finds no packet certainly lost but asks for last packets may have asked for
// nothing lost at all: while packets keep coming, the next such asking waits 1, 3, 7, ... up to
// 63 more timeouts, until a round finds a loss or a packet sent again (kResent) arrives new;
// a timeout with no packet in since the last asks for them again. Without that, 64 nodes whose
// packets take 400 us on the wire NACKed every round for packets queued at their parents, and
// the answers delayed the rest into more rounds until the model ran out of memory.
// A NACK's receiver sends the packet again, flagged kResent, to the NACKer if it has sent it
// (a packet it still holds queued for the NACKer leaves in the normal course). A combining
// sender not yet at that step ignores the NACK likewise. A hopping rank that lacks the packet
// itself passes the NACK to its own parent in the origin's tree, and forwards the packet down in
// the normal course once it arrives (still flagged kResent: it was lost for the subtree too);
// so a NACK climbs toward the origin until it meets a rank that has the packet. A rank passes a
// NACK up only if it has not asked for that packet itself since its last timeout: a packet lost
// high in a tree is missed by a whole subtree, and without that rule every rank of it would
// have the packet sent again once for each rank below.
//
// The op keeps answering NACKs after it completes, until the agent forgets it (Agent::release),
// so the host must keep the result buffer unchanged until then.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "nic/arrivals.h"
#include "nic/nic.h"
#include "nic/operation.h"
#include "plan/allgather.h"

namespace nicsim::nic {

// The limits the encoding sets: packets per transfer (or per block) and steps.
constexpr unsigned kAllgatherIndexBits = 24;
constexpr std::uint64_t kAllgatherMaxPackets = std::uint64_t{1} << kAllgatherIndexBits;
constexpr std::size_t kAllgatherMaxSteps = std::size_t{1} << (32 - kAllgatherIndexBits);

class AllgatherOp final : public Operation {
public:
    // Whether the op can run `schedule`: at most kAllgatherMaxSteps steps, each sending to and
    // receiving from at most one peer. (The caller keeps packets within kAllgatherMaxPackets.)
    static bool runs(const plan::AllgatherSchedule& schedule);

    // `rank`'s schedule of `algorithm` over the group `order` (ranks in locality order): over
    // its nodes (plan::node_allgather) when node_of is not empty and the op runs that, else the
    // plain one. Steps are as many on every rank, so every rank chooses alike (nodes of over 128
    // ranks take rd past kAllgatherMaxSteps).
    static plan::AllgatherSchedule schedule_for(const plan::AllgatherAlgorithm& algorithm,
                                                Rank rank, std::span<const Rank> order,
                                                std::span<const int> node_of);

    // `schedule` is this rank's and outlives the op; `combines` is the algorithm's.
    // `result` is empty or size * block_bytes long; `own` is empty or this rank's block,
    // block_bytes long, valid and unchanged until the op is done.
    // (Made once per group and algorithm, then reused: reuse().)
    [[gnu::cold]] AllgatherOp(Seq seq, Rank rank, Rank size, bool combines,
                              const plan::AllgatherSchedule& schedule, std::uint64_t block_bytes,
                              std::uint32_t mtu, std::span<std::byte> result, Nic& nic,
                              CollectiveStats& stats, std::span<const std::byte> own = {});

    // Makes this op, forgotten() by its agent, the collective `seq` with the constructor's other
    // arguments: what the constructor worked out from the schedule and the sizes stays (a job
    // repeats its calls). False, and the op unchanged, when the schedule, the algorithm or a size
    // differs.
    bool reuse(Seq seq, bool combines, const plan::AllgatherSchedule& schedule,
               std::uint64_t block_bytes, std::uint32_t mtu, std::span<std::byte> result,
               std::span<const std::byte> own = {});

    // The agent forgot the op, complete: back to no packet in, as the constructor leaves it, for
    // reuse(). (Done then, while the host waits for another collective, not when it posts one.)
    void forgotten();

    Status start() override;
    Status on_packet(Rank src, const PacketHeader& header,
                     std::span<const std::byte> payload) override;
    Status on_timeout() override;
    std::span<std::byte> placement(Rank src, const PacketHeader& header) override;

private:
    Status on_data(Rank src, const PacketHeader& header, std::span<const std::byte> payload);
    // One timeout's NACKs: whether they may ask for streams' last packets, and what they found.
    struct Round {
        bool tails;               // asks for last packets, which may only be late
        bool lost = false;        // found a packet certainly lost
        bool asked_tail = false;  // asked for a last packet
    };
    // The NACKs of one timeout for the bits [first, end) of arrived_[step], packets their sender
    // sends in that order (see the header comment).
    Status ask_overdue(std::size_t step, std::size_t first, std::size_t end, Round& round);
    Status resend_step(Rank src, std::size_t step, std::uint32_t index, Rank origin);
    Status resend_hop(Rank src, std::size_t step, std::uint32_t index, Rank origin);
    Status advance();
    Status status() const { return step_ == steps_.size() ? Status::ok : Status::in_progress; }

    // The bit in arrived_[step] of the data packet `header` names, if `src` sends it.
    std::optional<std::size_t> slot_of(Rank src, const PacketHeader& header) const;
    // Hopping: the bit in arrived_[step] of origin's packet `index`, if the step brings it.
    std::optional<std::size_t> hop_slot(std::size_t step, Rank origin, std::uint32_t index) const;
    // Hopping: the step that brings origin's block.
    std::optional<std::size_t> step_receiving(Rank origin) const;
    // A packet's header, without payload_bytes.
    PacketHeader header(PacketKind kind, std::size_t step, std::uint32_t index, Rank origin) const;
    // Sends the NACK for the packet of bit `slot` of arrived_[step] to the peer that sends it.
    Status ask(std::size_t step, std::size_t slot);

    // Where a packet's bytes lie in the gathered buffer: in one run (every hopping packet, and
    // every combined one of a transfer of one range: most packets, found by arithmetic), or in
    // the pieces plan::packet_at() finds.
    struct Layout {
        plan::ByteRange run;                 // unless there are pieces
        std::optional<plan::Packet> pieces;  // a combined packet of a transfer of several ranges
        std::uint64_t payload() const { return pieces ? pieces->payload() : run.length; }
        // The bytes when they are one run, pieces or not.
        std::optional<plan::ByteRange> one_run() const {
            if (!pieces) return run;
            if (pieces->pieces.size() == 1) return pieces->pieces.front();
            return std::nullopt;
        }
    };

    // A step's send or receive as the op cuts it into packets, worked out once (a job repeats
    // its calls, and reuse() keeps it): pack()ed together when combining, block by block when
    // not. A combined transfer of one range (every one on a power of two ranks) is one run of
    // bytes, so that its packets are found by arithmetic.
    struct Cut {
        Rank peer = -1;  // none
        std::uint64_t packets = 0;
        std::span<const plan::BlockRange> blocks;  // the schedule's
        std::optional<plan::ByteRange> run;        // combining, one range: its bytes
    };
    struct Step {
        Cut send;
        Cut recv;
    };
    Cut cut(const std::vector<plan::Transfer>& transfers) const;

    // Combining: packet `index` of a cut transfer. Hopping: packet `index` of origin's block.
    Layout packet_of(const Cut& cut, std::uint64_t index) const;
    Layout block_packet(Rank origin, std::uint32_t index) const;
    // The data packet `header` names, which slot_of() found this rank receives.
    Layout layout_of(const PacketHeader& header) const;

    // Sends the packet `header` names to dst, setting its payload_bytes: the caller's header,
    // not a copy of it, as Nic::send() takes it.
    Status send(Rank dst, PacketHeader&& header, const Layout& layout);
    // Sends the packet `header` names to src again, flagged kResent, unless this NIC still holds
    // it queued for src.
    Status resend(Rank src, PacketHeader&& header, const Layout& layout);
    // The bytes of `piece` of the gathered buffer: from own_ while this rank's block is not yet
    // in result_ (a piece that only partly covers it copies it there first).
    std::span<const std::byte> bytes_of(plan::ByteRange piece);
    // Copies own_ into its place in result_, once.
    void place_own();
    // Sends packet `index` of origin's block along every hop of origin, with `flags` (kResent:
    // it came late to this rank too, since a NACK found it lost).
    Status send_hops(Rank origin, std::uint32_t index, const Layout& layout,
                     std::uint16_t flags = 0);
    void place(const Layout& layout, std::span<const std::byte> payload);

    Seq seq_;
    Rank rank_;
    Rank size_;
    bool combines_;
    const plan::AllgatherSchedule* schedule_;
    std::uint64_t block_bytes_;
    std::uint32_t mtu_;
    std::span<std::byte> result_;
    std::span<const std::byte> own_;  // this rank's block until copied into result_
    Nic& nic_;
    CollectiveStats& stats_;
    std::uint64_t per_block_;  // packets per block
    SmallVector<Step, 4> steps_;
    // Hopping: where this rank sends each origin's packets, the schedule's sends by origin:
    // hops_[hop_first_[o] .. hop_first_[o + 1]) (worked out once, as steps_ is).
    struct Hop {
        Rank to;
        std::uint32_t step;
    };
    std::vector<std::uint32_t> hop_first_;
    std::vector<Hop> hops_;
    // [step] which packets of the step's receive are in (inline up to 4 steps: 16 ranks by
    // recursive doubling), and (hopping only) which of them this rank asked for since its last
    // timeout.
    SmallVector<Arrivals, 4> arrived_;
    SmallVector<Arrivals, 0> asked_;
    // Timeouts whose NACKs found no packet certainly lost but asked for last packets, in a row
    // (at most kMaxTailsBackoff); the timeouts to let pass before asking for those again while
    // packets keep coming; whether one came since the last timeout.
    static constexpr unsigned kMaxTailsBackoff = 6;
    unsigned unsure_rounds_ = 0;
    unsigned tails_wait_ = 0;
    bool heard_ = false;
    std::size_t step_ = 0;     // the first step whose receive is incomplete
    bool step_sent_ = false;   // combining: whether step_'s sends are out
    // Combined packets whose pieces lie apart, gathered; kept as long as the op, like every
    // other payload it hands the fabric (Fabric::transmit). (A vector of vectors: the bytes of
    // each stay put when the outer one grows, and an op that gathers nothing allocates nothing.)
    std::vector<std::vector<std::byte>> gathered_;
};

}  // namespace nicsim::nic
