#include "nic/staging.h"

namespace nicsim::nic {

void Staging::add(std::uint64_t payload_bytes, std::vector<Dma>& dmas) {
    if (payload_bytes == 0) return;
    if (payload_bytes > kSmallPayload || payload_bytes > bytes_) {
        flush(dmas);
        dmas.push_back({payload_bytes, 1});
        return;
    }
    if (payload_bytes > bytes_ - held_.bytes) flush(dmas);
    held_.bytes += payload_bytes;
    ++held_.payloads;
}

void Staging::flush(std::vector<Dma>& dmas) {
    if (held_.payloads == 0) return;
    dmas.push_back(held_);
    held_ = {};
}

}  // namespace nicsim::nic
