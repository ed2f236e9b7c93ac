// Simulator: the discrete-event core.
//
// Events run in a total order: by time, then by the order they were scheduled in. Nothing else
// (addresses, hash order, wall time) can influence it, so identical input gives identical output.
// An event is a (handler, kind, argument) triple rather than a closure: scheduling allocates
// nothing, which matters at tens of millions of events per run.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace nicsim::sim {

class EventHandler {
public:
    virtual void on_event(std::uint32_t kind, std::uint32_t arg) = 0;
    // The event (kind, arg) runs next, and the first prefetch bytes of this handler's state
    // were asked for an event ago (Simulator::set_prefetch_bytes): the handler may prefetch
    // what the event needs beyond them, through the pointers held there.
    virtual void prepare(std::uint32_t /*kind*/, std::uint32_t /*arg*/) {}

protected:
    ~EventHandler() = default;
};

class Simulator {
public:
    struct Event {
        Time at;
        EventHandler* handler;
        std::uint32_t kind;
        std::uint32_t arg;
    };

    Time now() const { return now_; }
    // Runs `handler.on_event(kind, arg)` at time `at` (not before now()).
    void schedule(Time at, EventHandler& handler, std::uint32_t kind, std::uint32_t arg = 0);
    // Runs events until none is left; returns how many ran.
    std::uint64_t run();
    std::uint64_t events_run() const { return events_run_; }

    // While an event runs, the simulator asks the memory system for the first `bytes` of the
    // handler of the event after next, so that a handler whose state is not in cache (one of
    // thousands of nodes) does not wait for it, and lets the next event's handler prepare()
    // (its state is then at hand). 0, the default, prefetches nothing.
    void set_prefetch_bytes(std::size_t bytes) { prefetch_bytes_ = bytes; }

    // A long run's progress, for the command line: after about every 2^24 events a simulator
    // calls `report` with now() and its events run so far. Process-wide; nullptr, the default,
    // reports nothing. It reads no clock itself, so a run is the same with or without it.
    using Report = void (*)(Time now, std::uint64_t events_run);
    static void set_report(Report report);

private:
    // The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990), which needs what a
    // simulator guarantees: nothing is scheduled before now(). Bucket 0 holds the events at
    // now(); bucket b > 0 those whose time first differs from now() in bit b - 1 (counting from
    // the lowest), so every event in a lower bucket comes before every event in a higher one.
    // When bucket 0 runs out, the least time in the lowest non-empty bucket becomes now() and
    // that bucket's events move down, those at the new now() into bucket 0:
    //
    //   now = 8 (0b1000)   bucket 0: [8 8]   bucket 1: [9]   bucket 3: [13 12]   bucket 5: [20]
    //   bucket 0 and 1 used up: bucket 3 moves down, now = 12
    //                      bucket 0: [12]    bucket 1: [13]                      bucket 5: [20]
    //
    // An event moves at most once per bit of its distance from now(), each move an append to a
    // vector, so the queue costs a few sequential passes where a heap costs a chain of dependent
    // loads spread over the whole queue.
    //
    // Ties: scheduling appends, and a bucket moves down in its own order into buckets that are
    // empty at the time (all lower ones are), so every bucket stays in scheduling order and
    // bucket 0, read from the front, runs the events at now() in the order they were scheduled.
    static constexpr int kBuckets = 65;
    static int bucket(Time at, Time now) { return std::bit_width(at ^ now); }
    void refill();

    std::array<std::vector<Event>, kBuckets> buckets_;
    std::uint64_t occupied_ = 0;  // bit b - 1 set: bucket b (1..64) holds events
    std::size_t next_ = 0;        // bucket 0's next event
    std::size_t size_ = 0;
    std::size_t prefetch_bytes_ = 0;
    Time now_ = 0;
    std::uint64_t events_run_ = 0;
    std::uint64_t next_report_ = kReportEvents;  // report when events_run_ reaches it
    static constexpr std::uint64_t kReportEvents = std::uint64_t{1} << 24;
};

}  // namespace nicsim::sim
