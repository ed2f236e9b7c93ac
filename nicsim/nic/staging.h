// The NIC staging buffer (Yu et al. §5.1, §5.2): small payloads bound for the host are gathered
// in NIC memory and cross the I/O bus in one DMA, instead of one DMA each.
//
// A payload of at most kSmallPayload bytes is appended to the buffer; the buffer goes to the host
// in one DMA when the next small payload would not fit, when a larger payload must pass (it goes
// straight to the host, after what waits, so the host sees payloads in arrival order), and when
// the collective completes (flush()). Yu et al. uses 8 KiB and 64 bytes.
//
// Only sizes are kept: the result is the DMAs a NIC issues, for a model to charge time for. (A
// NIC that is software in the host's own memory copies each payload in place, so gathering the
// bytes themselves would only add a copy.)
#pragma once

#include <cstdint>
#include <vector>

namespace nicsim::nic {

// One DMA from the NIC to the host: its bytes and how many payloads it carries.
struct Dma {
    std::uint64_t bytes = 0;
    std::uint32_t payloads = 0;

    friend bool operator==(const Dma&, const Dma&) = default;
};

class Staging {
public:
    static constexpr std::uint64_t kSmallPayload = 64;
    static constexpr std::uint64_t kDefaultBytes = 8 * 1024;

    explicit Staging(std::uint64_t bytes = kDefaultBytes) : bytes_(bytes) {}

    // A payload for the host arrived: appends to `dmas` the DMAs it causes, in order (none when
    // it only waits in the buffer; nothing at all for an empty payload).
    void add(std::uint64_t payload_bytes, std::vector<Dma>& dmas);

    // The collective completed: what waits goes to the host.
    void flush(std::vector<Dma>& dmas);

    // Bytes waiting in the buffer.
    std::uint64_t held() const { return held_.bytes; }

private:
    std::uint64_t bytes_;
    Dma held_;
};

}  // namespace nicsim::nic
