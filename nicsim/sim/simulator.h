// Simulator: the discrete-event core.
//
// Events run in a total order: by time, then by the order they were scheduled in. Nothing else
// (addresses, hash order, wall time) can influence it, so identical input gives identical output.
// An event is a (handler, kind, argument) triple rather than a closure: scheduling allocates
// nothing, which matters at tens of millions of events per run.
#pragma once

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

private:
    // The heap orders 128-bit keys: the time, then the scheduling order, then the event's slot in
    // `events_` (the low kSlotBits bits). One integer comparison orders two events, four
    // children share one cache line, and a sift moves half as much as it would whole events.
    static constexpr int kSlotBits = 24;
    using Key = unsigned __int128;
    struct Event {
        EventHandler* handler;
        std::uint32_t kind;
        std::uint32_t arg;
    };
    void sift_up(std::size_t i);
    void sift_down(std::size_t i);

    std::vector<Key> heap_;  // a 4-ary min-heap
    std::vector<Event> events_;
    std::vector<std::uint32_t> free_slots_;
    Time now_ = 0;
    std::uint64_t next_order_ = 0;
    std::uint64_t events_run_ = 0;
};

}  // namespace nicsim::sim
