// The wire format of an engine packet: a fixed 16-byte header, then an optional payload.
//
//   byte  0      2     3     4            8      10     12           16
//         +------+-----+-----+------------+------+------+------------+---------
//         |magic |ver  |kind | seq        | step |flags |payload len | payload
//         +------+-----+-----+------------+------+------+------------+---------
//
// Fields are in host byte order: every process of an MPI job runs on the same architecture.
// `seq` names the collective (its position in the group's call order), `step` the position of
// the packet within that collective's schedule.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/status.h"

namespace nicsim {

enum class PacketKind : std::uint8_t {
    barrier = 1,
};

struct PacketHeader {
    static constexpr std::uint16_t kMagic = 0x4e43;  // "NC"
    static constexpr std::uint8_t kVersion = 1;
    static constexpr std::size_t kBytes = 16;

    PacketKind kind = PacketKind::barrier;
    Seq seq = 0;
    std::uint16_t step = 0;
    std::uint16_t flags = 0;
    std::uint32_t payload_bytes = 0;

    std::array<std::byte, kBytes> encode() const;
    // Empty when `bytes` is too short, has a foreign magic or version, an unknown kind, or a
    // payload length that disagrees with the packet length.
    static std::optional<PacketHeader> decode(std::span<const std::byte> bytes);

    friend bool operator==(const PacketHeader&, const PacketHeader&) = default;
};

// Payloads come with later collectives; barrier packets are header only.
constexpr std::size_t kPacketMaxBytes = PacketHeader::kBytes;

}  // namespace nicsim
