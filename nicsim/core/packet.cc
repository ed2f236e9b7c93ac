#include "core/packet.h"

#include <bit>
#include <cstring>

namespace nicsim {

namespace {

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

// A field, or a word of the encoded header, in a register of its own: the empty asm keeps the
// compiler from merging neighbouring fields into one wider load (or two words into one store).
// A load that spans several recent stores is not forwarded from the store buffer: it waits until
// they, and every store before them (the last packet's, to a line another core holds), reached
// the cache, which perf put at most of a 4-rank small allgather's cycles in the engine.
std::uint64_t on_its_own(std::uint64_t value) {
    asm("" : "+r"(value));
    return value;
}

}  // namespace

std::array<std::byte, PacketHeader::kBytes> PacketHeader::encode() const {
    // The fields where decode_header() reads them, loaded as they were stored and composed into
    // three words stored whole, which a transport copies at once (a shared-memory slot, 8 bytes
    // at a time: coll/coll_nicoll_ring.h).
    static_assert(std::endian::native == std::endian::little);
    const std::uint64_t words[3] = {
        on_its_own(kMagic | std::uint64_t{kVersion} << 16 |
                   on_its_own(static_cast<std::uint8_t>(kind)) << 24 | on_its_own(seq) << 32),
        on_its_own(on_its_own(step) | on_its_own(static_cast<std::uint32_t>(origin)) << 32),
        on_its_own(on_its_own(flags) | on_its_own(credits) << 16 |
                   on_its_own(payload_bytes) << 32)};
    std::array<std::byte, kBytes> out;
    std::memcpy(out.data(), words, kBytes);
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
