#include "plan/barrier_dissemination.h"

namespace nicsim::plan {

BarrierSchedule barrier_dissemination(Rank rank, Rank size) {
    BarrierSchedule steps(ceil_log2(size));
    for (int r = 0; r < static_cast<int>(steps.size()); ++r) {
        const Rank distance = Rank{1} << r;
        steps[r].send_to = {(rank + distance) % size};
        steps[r].recv_from = {(rank - distance + size) % size};
    }
    return steps;
}

}  // namespace nicsim::plan
