#include "sim/simulator.h"

#include <algorithm>
#include <cassert>

namespace nicsim::sim {

namespace {
Simulator::Report report = nullptr;
}  // namespace

void Simulator::set_report(Report r) { report = r; }

void Simulator::schedule(Time at, EventHandler& handler, std::uint32_t kind, std::uint32_t arg) {
    assert(at >= now_);
    const int b = bucket(at, now_);
    buckets_[b].push_back({at, &handler, kind, arg});
    if (b != 0) occupied_ |= std::uint64_t{1} << (b - 1);
    ++size_;
}

std::uint64_t Simulator::run() {
    const std::uint64_t start = events_run_;
    while (size_ != 0) {
        if (next_ == buckets_[0].size()) refill();
        const Event e = buckets_[0][next_++];
        --size_;
        // The next events are known for sure while bucket 0 holds them, which it usually does:
        // events come in bunches at one time (a broadcast's packets reach a tree level
        // together). The one after next has its handler's state fetched; the next, whose state
        // was fetched an event ago, prepares. The prefetch is written here rather than in a
        // function of its own: GCC takes a function that only prefetches for one without effects
        // and drops the calls to it.
        if (prefetch_bytes_ != 0 && next_ != buckets_[0].size()) {
            if (next_ + 1 != buckets_[0].size()) {
                const auto* state = reinterpret_cast<const char*>(buckets_[0][next_ + 1].handler);
                for (std::size_t offset = 0; offset < prefetch_bytes_; offset += 64) {
                    __builtin_prefetch(state + offset);
                }
            }
            const Event& n = buckets_[0][next_];
            n.handler->prepare(n.kind, n.arg);
        }
        ++events_run_;
        e.handler->on_event(e.kind, e.arg);
    }
    return events_run_ - start;
}

// Bucket 0 is used up and events are left: the lowest non-empty bucket's least time becomes
// now(), and its events move down.
// (The report is here, once per time that events run at, not once per event.)
void Simulator::refill() {
    if (events_run_ >= next_report_) {
        next_report_ = events_run_ + kReportEvents;
        if (report != nullptr) report(now_, events_run_);
    }
    buckets_[0].clear();
    next_ = 0;
    const int b = std::countr_zero(occupied_) + 1;
    std::vector<Event>& from = buckets_[b];
    Time least = from.front().at;
    for (const Event& e : from) least = std::min(least, e.at);
    now_ = least;
    // Locals, not members, in the loop: the compiler would otherwise reload them after every
    // store into a bucket, which might have changed them.
    std::uint64_t occupied = occupied_ & (occupied_ - 1);
    for (const Event& e : from) {
        const int to = bucket(e.at, least);
        buckets_[to].push_back(e);
        if (to != 0) occupied |= std::uint64_t{1} << (to - 1);
    }
    occupied_ = occupied;
    from.clear();
}

}  // namespace nicsim::sim
