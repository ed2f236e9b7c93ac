#include "plan/barrier_flat.h"

namespace nicsim::plan {

BarrierSchedule barrier_flat(Rank rank, Rank size) {
    constexpr Rank radix = kMaxBarrierSenders + 1;
    BarrierSchedule steps;
    for (Rank span = 1; span < size; span *= radix) {
        BarrierStep& step = steps.emplace_back();
        for (Rank j = 1; j < radix && j * span < size; ++j) {
            step.send_to.push_back((rank + j * span) % size);
            step.recv_from.push_back((rank - j * span + size) % size);
        }
    }
    return steps;
}

}  // namespace nicsim::plan
