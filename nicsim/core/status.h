// Core vocabulary shared by every layer of the engine: ranks, sequence numbers and status codes.
//
// Status mirrors nicsim_status_t value for value (checked in capi/), so results cross the C API
// without a translation table.
#pragma once

#include <cstdint>

namespace nicsim {

using Rank = int;          // a rank within a group, 0..size-1
using Seq = std::uint32_t; // the position of a collective in its group's call order

// Sequence numbers wrap: `a` is `b` or comes after it when it is less than half the number space
// ahead.
constexpr bool seq_at_or_after(Seq a, Seq b) { return static_cast<Seq>(a - b) < (Seq{1} << 31); }

enum class Status : int {
    ok = 0,
    in_progress = 1,
    invalid = -1,
    no_memory = -2,
    again = -3,
    transport = -4,
    protocol = -5,
    peer_failed = -6,  // another rank could not take part in this collective
};

constexpr bool failed(Status s) { return static_cast<int>(s) < 0; }

const char* to_string(Status s);

}  // namespace nicsim
