#include "core/packet.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim {
namespace {

std::vector<std::byte> bytes_of(const PacketHeader& h) {
    const auto a = h.encode();
    return {a.begin(), a.end()};
}

TEST(Packet, HeaderRoundTrips) {
    PacketHeader h;
    h.kind = PacketKind::barrier;
    h.seq = 0xdeadbeef;
    h.step = 70000;
    h.origin = 4095;
    h.flags = 7;
    h.credits = 9;
    h.payload_bytes = 0;
    const auto decoded = PacketHeader::decode(bytes_of(h));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, h);
}

TEST(Packet, EveryKindRoundTrips) {
    for (const PacketKind kind : {PacketKind::barrier, PacketKind::unicast, PacketKind::credit,
                                  PacketKind::allgather, PacketKind::nack, PacketKind::bcast,
                                  PacketKind::recovery_ack, PacketKind::abort}) {
        PacketHeader h;
        h.kind = kind;
        const auto decoded = PacketHeader::decode(bytes_of(h));
        ASSERT_TRUE(decoded.has_value()) << static_cast<int>(kind);
        EXPECT_EQ(decoded->kind, kind);
    }
}

TEST(Packet, RejectsShortForeignAndInconsistentPackets) {
    const auto good = bytes_of(PacketHeader{});
    EXPECT_TRUE(PacketHeader::decode(good).has_value());
    EXPECT_FALSE(PacketHeader::decode(std::span(good).first(PacketHeader::kBytes - 1)));
    EXPECT_FALSE(PacketHeader::decode({}));

    auto magic = good;
    magic[0] ^= std::byte{1};
    EXPECT_FALSE(PacketHeader::decode(magic));

    auto version = good;
    version[2] = std::byte{99};
    EXPECT_FALSE(PacketHeader::decode(version));

    auto kind = good;
    kind[3] = std::byte{0};
    auto kind_high = good;
    kind_high[3] = std::byte{10};
    EXPECT_FALSE(PacketHeader::decode(kind_high));
    auto kind_retired = good;  // 2 was the host's multicast, now the agent's broadcast
    kind_retired[3] = std::byte{2};
    EXPECT_FALSE(PacketHeader::decode(kind_retired));
    EXPECT_FALSE(PacketHeader::decode(kind));

    auto trailing = good;  // payload_bytes says 0 but a byte follows
    trailing.push_back(std::byte{0});
    EXPECT_FALSE(PacketHeader::decode(trailing));
}

}  // namespace
}  // namespace nicsim
