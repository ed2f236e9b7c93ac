#include "core/packet.h"

#include <cstring>

namespace nicsim {

namespace {

template <typename T>
void put(std::array<std::byte, PacketHeader::kBytes>& out, std::size_t at, T value) {
    std::memcpy(out.data() + at, &value, sizeof value);
}

template <typename T>
T get(std::span<const std::byte> in, std::size_t at) {
    T value;
    std::memcpy(&value, in.data() + at, sizeof value);
    return value;
}

bool known_kind(std::uint8_t kind) {
    switch (static_cast<PacketKind>(kind)) {
    case PacketKind::barrier:
    case PacketKind::unicast:
    case PacketKind::credit:
    case PacketKind::allgather:
    case PacketKind::nack:
    case PacketKind::bcast:
    case PacketKind::recovery_ack:
    case PacketKind::abort:
        return true;
    }
    return false;
}

}  // namespace

std::array<std::byte, PacketHeader::kBytes> PacketHeader::encode() const {
    std::array<std::byte, kBytes> out{};
    put(out, 0, kMagic);
    put(out, 2, kVersion);
    put(out, 3, static_cast<std::uint8_t>(kind));
    put(out, 4, seq);
    put(out, 8, step);
    put(out, 12, origin);
    put(out, 16, flags);
    put(out, 18, credits);
    put(out, 20, payload_bytes);
    return out;
}

std::optional<PacketHeader> PacketHeader::decode(std::span<const std::byte> bytes) {
    auto h = decode_header(bytes);
    if (h && bytes.size() - kBytes != h->payload_bytes) return std::nullopt;
    return h;
}

std::optional<PacketHeader> PacketHeader::decode_header(std::span<const std::byte> bytes) {
    if (bytes.size() < kBytes || get<std::uint16_t>(bytes, 0) != kMagic ||
        get<std::uint8_t>(bytes, 2) != kVersion || !known_kind(get<std::uint8_t>(bytes, 3))) {
        return std::nullopt;
    }
    PacketHeader h;
    h.kind = static_cast<PacketKind>(get<std::uint8_t>(bytes, 3));
    h.seq = get<Seq>(bytes, 4);
    h.step = get<std::uint32_t>(bytes, 8);
    h.origin = get<Rank>(bytes, 12);
    h.flags = get<std::uint16_t>(bytes, 16);
    h.credits = get<std::uint16_t>(bytes, 18);
    h.payload_bytes = get<std::uint32_t>(bytes, 20);
    return h;
}

}  // namespace nicsim
