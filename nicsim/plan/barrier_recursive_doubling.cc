#include "plan/barrier_recursive_doubling.h"

namespace nicsim::plan {

BarrierSchedule barrier_recursive_doubling(Rank rank, Rank size) {
    const int rounds = ceil_log2(size + 1) - 1;  // log2 of the largest power of two <= size
    const Rank core = Rank{1} << rounds;
    const Rank extra = size - core;
    BarrierSchedule steps(rounds + 2);
    BarrierStep& fold_in = steps.front();
    BarrierStep& fold_out = steps.back();
    if (rank >= core) {
        fold_in.send_to = {rank - core};
        fold_out.recv_from = {rank - core};
        return steps;
    }
    if (rank < extra) {
        fold_in.recv_from = {rank + core};
        fold_out.send_to = {rank + core};
    }
    for (int r = 0; r < rounds; ++r) {
        const Rank partner = rank ^ (Rank{1} << r);
        steps[r + 1].send_to = {partner};
        steps[r + 1].recv_from = {partner};
    }
    return steps;
}

}  // namespace nicsim::plan
