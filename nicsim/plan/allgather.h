// Planner: allgather schedules, hopping packets and packing (Yu et al. §4.1.2).
//
// Every rank contributes one block of B bytes and ends with all N blocks; the block of origin
// rank o lies at byte o * B of the gathered buffer, so blocks are named by origin and a range of
// consecutive origins is one contiguous run of bytes.
//
// A schedule is a list of steps per rank, read like a barrier schedule (barrier.h): at each step
// a rank first makes its sends, then waits for its receives, then moves on. Step numbers are
// global, so a packet carries its step and may arrive before its receiver gets there. A send
// carries only blocks its rank held when the step began (its own and those received at earlier
// steps), every send is matched by a receive of the same blocks at the same step, so both sides
// cut it into the same packets (pack()), and no rank receives a block twice. Every peer a
// schedule names is in the rank's binomial group (group.h), except flat's, which names every
// rank, and over nodes (node_allgather()).
//
//   algorithm   steps, N = 2^m   other N             a step                     packets
//   rd          m                floor(log2 N) + 2   exchange with rank ^ 2^k   combined
//   ab          m                ceil(log2 N)        to rank + 2^k, from - 2^k  one origin each
//   flat        N - 1            N - 1               to rank + d, from - d      one origin each
//   host-rd     as rd, each step driven by the host (Yu et al.'s baseline)
//   host-ring   N - 1            N - 1               one block to rank + 1      combined
//
// A hopping algorithm's NIC does not wait for steps (nic/allgather_op.h): a packet goes on the
// moment it arrives, to every send of a later step that names its origin, so the sends naming an
// origin are its tree, and a step only tells the receiver which origins come from which peer.
//
// Yu et al. §6: rd wins for small blocks, whose log N steps fit in few packets; ab wins for large
// ones, where combining no longer saves packets and forwarding each packet as it arrives does.
// flat forwards nothing: each rank sends its own block to every other at once, N - 1 packets that
// wait for no step. Where processes share cores, a rank then waits for no peer to be scheduled
// twice (4 oversubscribed ranks on one node: docs/measurements.md).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/small_vector.h"
#include "core/status.h"

namespace nicsim::plan {

// The blocks of origins first .. first + count - 1.
struct BlockRange {
    Rank first = 0;
    Rank count = 0;

    friend bool operator==(const BlockRange&, const BlockRange&) = default;
};

// The blocks a rank sends to or receives from one peer at one step: ranges in ascending order,
// neither overlapping nor adjacent.
struct Transfer {
    Rank peer = 0;
    std::vector<BlockRange> blocks;

    friend bool operator==(const Transfer&, const Transfer&) = default;
};

struct AllgatherStep {
    std::vector<Transfer> sends;
    std::vector<Transfer> recvs;

    friend bool operator==(const AllgatherStep&, const AllgatherStep&) = default;
};

using AllgatherSchedule = std::vector<AllgatherStep>;

struct AllgatherAlgorithm {
    std::string_view name;
    std::string_view description;
    bool on_host;   // a host-based baseline: the host drives every step, not the NIC
    bool combines;  // a transfer's blocks share packets (pack(transfer.blocks)); otherwise each
                    // origin's block travels in packets of its own (pack({origin, 1})), which is
                    // what lets ab forward a packet as it is
    AllgatherSchedule (*plan)(Rank rank, Rank size);  // 0 <= rank < size
};

// The table of allgather algorithms; index 0 (rd) is the default.
std::span<const AllgatherAlgorithm> allgather_algorithms();

// nullptr when no algorithm has this name.
const AllgatherAlgorithm* find_allgather_algorithm(std::string_view name);

AllgatherSchedule allgather_recursive_doubling(Rank rank, Rank size);  // rd, host-rd
AllgatherSchedule allgather_all_to_all(Rank rank, Rank size);          // ab
AllgatherSchedule allgather_ring(Rank rank, Rank size);                // host-ring
AllgatherSchedule allgather_flat(Rank rank, Rank size);                // flat

// The allgather over nodes (allgather_nodes.cc) for `rank`: ranks whose node_of (by rank) is the
// same share a node, its members in their `order`. Every block crosses into each other node once.
// Combining (rd): each member sends its block to its node's first rank, the leaders run
// `algorithm` among themselves with a node's blocks wherever it moves one, and each leader sends
// each member every block but its own. Hopping (ab): the members cross in parallel, the c-th of
// every node running `algorithm` among the nodes with the blocks of its column, then every rank
// gives the other members of its node what it brought. With one node, or one rank per node,
// algorithm.plan(rank, size).
AllgatherSchedule node_allgather(const AllgatherAlgorithm& algorithm, Rank rank,
                                 std::span<const Rank> order, std::span<const int> node_of);

// The blocks of `count` consecutive origins from `first` (taken modulo size) on, wrapping from
// size - 1 to 0, as a Transfer's ranges: at most two. 0 <= count <= size.
std::vector<BlockRange> cyclic_blocks(Rank first, Rank count, Rank size);

// How many blocks the ranges name.
Rank block_count(std::span<const BlockRange> blocks);

// Bytes [offset, offset + length) of the gathered buffer.
struct ByteRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;

    friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// One packet's payload: pieces in the order they are sent, each a run of bytes of one or more
// consecutive blocks, so that a NIC moves each piece with one DMA.
struct Packet {
    SmallVector<ByteRange, 2> pieces;  // most packets are one run, or two

    std::uint64_t payload() const;

    friend bool operator==(const Packet&, const Packet&) = default;
};

// The blocks' bytes, in block order, cut into as few packets as hold at most `mtu` payload
// bytes each: every packet but the last is full, a block may straddle packets, and one packet
// may carry many blocks. With no bytes to send (B == 0 or no blocks) this is one packet without
// pieces: the step still needs it to synchronise, and the receiver knows from its own schedule
// which blocks it stands for.
// No packets at all when mtu == 0, which no transport has.
std::vector<Packet> pack(std::span<const BlockRange> blocks, std::uint64_t block_bytes,
                         std::uint64_t mtu);

// How many packets pack() makes, and packet `index` < packet_count() of them, without the others:
// a NIC names a packet by its index and finds its bytes when it needs them, keeping no list.
std::uint64_t packet_count(std::span<const BlockRange> blocks, std::uint64_t block_bytes,
                           std::uint64_t mtu);
Packet packet_at(std::span<const BlockRange> blocks, std::uint64_t block_bytes, std::uint64_t mtu,
                 std::uint64_t index);

}  // namespace nicsim::plan
