#include "plan/allgather.h"

#include <algorithm>
#include <array>

#include "core/packet.h"

namespace nicsim::plan {

std::span<const AllgatherAlgorithm> allgather_algorithms() {
    static constexpr std::array<AllgatherAlgorithm, 5> table{{
        {"rd",
         "NIC recursive doubling (Yu et al.): exchange with rank XOR 2^k, each step's blocks "
         "combined into MTU packets; ranks beyond a power of two fold in and out",
         false, true, allgather_recursive_doubling},
        {"ab",
         "NIC all-to-all broadcast with hopping packets (Yu et al.): each block follows its "
         "origin's binomial tree, forwarded packet by packet; ceil(log2 N) hops",
         false, false, allgather_all_to_all},
        {"flat",
         "every rank sends its own block straight to every other rank, all at once: N - 1 "
         "packets, none forwarded",
         false, false, allgather_flat},
        {"host-rd", "host-based recursive doubling, Yu et al.'s baseline: the rd schedule", true,
         true, allgather_recursive_doubling},
        {"host-ring", "host-based ring: N - 1 steps, each passing one block to rank + 1", true,
         true, allgather_ring},
    }};
    return table;
}

const AllgatherAlgorithm* find_allgather_algorithm(std::string_view name) {
    const auto table = allgather_algorithms();
    const auto it = std::find_if(
        table.begin(), table.end(),
        [name](const AllgatherAlgorithm& algorithm) { return algorithm.name == name; });
    return it == table.end() ? nullptr : &*it;
}

std::vector<BlockRange> cyclic_blocks(Rank first, Rank count, Rank size) {
    first = (first % size + size) % size;
    const Rank head = std::min(count, size - first);  // the part before the wrap
    std::vector<BlockRange> blocks;
    if (count > head) blocks.push_back({0, count - head});
    if (head > 0) {
        // Wrapping all the way round meets the first range: one range, not two adjacent ones.
        if (!blocks.empty() && blocks.back().count == first) {
            blocks.back().count += head;
        } else {
            blocks.push_back({first, head});
        }
    }
    return blocks;
}

Rank block_count(std::span<const BlockRange> blocks) {
    Rank count = 0;
    for (const BlockRange& range : blocks) count += range.count;
    return count;
}

std::uint64_t Packet::payload() const {
    std::uint64_t bytes = 0;
    for (const ByteRange& piece : pieces) bytes += piece.length;
    return bytes;
}

std::vector<Packet> pack(std::span<const BlockRange> blocks, std::uint64_t block_bytes,
                         std::uint64_t mtu) {
    std::vector<Packet> packets;
    const std::uint64_t count = packet_count(blocks, block_bytes, mtu);
    packets.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        packets.push_back(packet_at(blocks, block_bytes, mtu, i));
    }
    return packets;
}

std::uint64_t packet_count(std::span<const BlockRange> blocks, std::uint64_t block_bytes,
                           std::uint64_t mtu) {
    if (mtu == 0) return 0;
    return nicsim::packet_count(static_cast<std::uint64_t>(block_count(blocks)) * block_bytes, mtu);
}

Packet packet_at(std::span<const BlockRange> blocks, std::uint64_t block_bytes, std::uint64_t mtu,
                 std::uint64_t index) {
    // Bytes [index * mtu, (index + 1) * mtu) of the blocks' bytes in block order.
    Packet packet;
    std::uint64_t skip = index * mtu;
    std::uint64_t room = mtu;
    for (const BlockRange& range : blocks) {
        const std::uint64_t length = static_cast<std::uint64_t>(range.count) * block_bytes;
        if (skip >= length) {
            skip -= length;
            continue;
        }
        const std::uint64_t take = std::min(length - skip, room);
        const std::uint64_t offset = static_cast<std::uint64_t>(range.first) * block_bytes;
        packet.pieces.push_back({offset + skip, take});
        skip = 0;
        room -= take;
        if (room == 0) break;
    }
    return packet;
}

}  // namespace nicsim::plan
