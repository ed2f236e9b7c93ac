// Simulator: the discrete-event core.
//
// Events run in a total order: by time, then by the order they were scheduled in. Nothing else
// (addresses, hash order, wall time) can influence it, so identical input gives identical output.
// An event is a (handler, kind, argument) triple rather than a closure: scheduling allocates
// nothing, which matters at tens of millions of events per run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace nicsim::sim {

class EventHandler {
public:
    virtual void on_event(std::uint32_t kind, std::uint32_t arg) = 0;

protected:
    ~EventHandler() = default;
};

class Simulator {
public:
    Time now() const { return now_; }
    // Runs `handler.on_event(kind, arg)` at time `at` (not before now()).
    void schedule(Time at, EventHandler& handler, std::uint32_t kind, std::uint32_t arg = 0);
    // Runs events until none is left; returns how many ran.
    std::uint64_t run();
    std::uint64_t events_run() const { return events_run_; }

    // While an event runs, the simulator asks the memory system for the first `bytes` of the
    // next event's handler, so that a handler whose state is not in cache (one of thousands of
    // nodes) does not wait for it. 0, the default, prefetches nothing.
    void set_prefetch_bytes(std::size_t bytes) { prefetch_bytes_ = bytes; }

private:
    // The heap orders 128-bit keys: the time, then the scheduling order, then the event's slot in
    // `events_` (the low kSlotBits bits). One integer comparison orders two events, and a sift
    // moves half as much as it would whole events.
    static constexpr int kSlotBits = 24;
    using Key = unsigned __int128;
    static constexpr Key kNoKey = ~Key{0};  // fills the positions past the end
    struct Event {
        EventHandler* handler;
        std::uint32_t kind;
        std::uint32_t arg;
    };
    // A 4-ary heap laid out so that the four children of a position fill one cache line:
    // position p lives in groups_[(p + 3) / 4], the root alone in group 0 and the children of p
    // in group p + 1. Positions past the end hold kNoKey, so the least child is picked from
    // four keys without bounds checks.
    //
    //   group 0: [ -  -  -  0 ]   group 1: [ 1  2  3  4 ]   group 2: [ 5  6  7  8 ]  (under 1)
    struct alignas(64) Group {
        Key keys[4];
    };
    Key& key(std::size_t pos) { return groups_[(pos + 3) / 4].keys[(pos + 3) % 4]; }
    void push(Key k);
    Key pop();
    // Moves `k` from position `pos` up to where it belongs, and puts it there.
    void sift_up(std::size_t pos, Key k);
    void prefetch_next() const;

    std::vector<Group> groups_;
    std::size_t size_ = 0;
    std::vector<Event> events_;
    std::vector<std::uint32_t> free_slots_;
    std::size_t prefetch_bytes_ = 0;
    Time now_ = 0;
    std::uint64_t next_order_ = 0;
    std::uint64_t events_run_ = 0;
};

}  // namespace nicsim::sim
