// Flat barrier: every rank signals every other, and leaves once it has heard from them all.
//
// One step up to kMaxBarrierSenders + 1 ranks: no rank relays another's arrival, so the last
// rank to arrive releases every rank with its own signals, where a tree's root must first hear
// of it and then run again to release them. On cores shared by several ranks that is one turn
// of a core less per barrier: back-to-back barriers of 4 ranks on 2 cores take about 0.8 of
// coll/tuned's time by the mean over ranks, where the tree ties; but the calls are less even,
// the slowest rank's about 1.2 of tuned's, and the ranks leave at once rather than in a
// broadcast's order (barrier_tree.h). P - 1 signals per rank, P (P - 1) in all. (As allgather's
// flat: every rank straight to every other.)
//
// Above kMaxBarrierSenders + 1 ranks, rounds of at most kMaxBarrierSenders signals (Hoefler et
// al.'s n-way dissemination, with n the most signals a step can wait for): with s = 65^r, in
// round r rank i signals i + j s (mod P) and waits for i - j s (mod P), for j = 1 .. min(64,
// ceil(P / s) - 1). After round r a rank has heard, directly or through others, from the
// 65^(r+1) - 1 ranks before it; ceil(log_65 P) rounds.
#pragma once

#include "plan/barrier.h"

namespace nicsim::plan {

BarrierSchedule barrier_flat(Rank rank, Rank size);

}  // namespace nicsim::plan
