// Dissemination barrier (Hensgen, Finkel and Manber 1988).
//
// ceil(log2 P) steps; in step r rank i signals (i + 2^r) mod P and waits for (i - 2^r) mod P.
// After step r every rank has heard, directly or transitively, from the 2^(r+1) ranks before it,
// so after the last step it has heard from all P. Works for any P without padding.
#pragma once

#include "plan/barrier.h"

namespace nicsim::plan {

BarrierSchedule barrier_dissemination(Rank rank, Rank size);

}  // namespace nicsim::plan
