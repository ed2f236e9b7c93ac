// The event core: events run by time, then in the order they were scheduled, including events
// scheduled while others run.
#include <gtest/gtest.h>

#include <queue>
#include <tuple>
#include <vector>

#include "sim/simulator.h"

namespace nicsim::sim {
namespace {

class Recorder final : public EventHandler {
public:
    explicit Recorder(Simulator& sim) : sim_(sim) {}
    void on_event(std::uint32_t kind, std::uint32_t arg) override {
        log.push_back({sim_.now(), kind, arg});
        if (kind == 1 && arg < 3) sim_.schedule(sim_.now() + 5, *this, 1, arg + 1);
        if (kind == 2) sim_.schedule(sim_.now(), *this, 3, arg);  // same time: after the rest
    }
    struct Entry {
        Time at;
        std::uint32_t kind;
        std::uint32_t arg;
        friend bool operator==(const Entry&, const Entry&) = default;
    };
    std::vector<Entry> log;

private:
    Simulator& sim_;
};

TEST(Simulator, RunsEventsByTimeThenBySchedulingOrder) {
    Simulator sim;
    Recorder r(sim);
    sim.schedule(10, r, 0, 7);
    sim.schedule(10, r, 2, 8);
    sim.schedule(10, r, 0, 9);
    sim.schedule(0, r, 1, 0);
    sim.schedule(3, r, 0, 1);
    EXPECT_EQ(sim.run(), 9u);
    const std::vector<Recorder::Entry> expected = {
        {0, 1, 0}, {3, 0, 1}, {5, 1, 1}, {10, 0, 7}, {10, 2, 8},
        {10, 0, 9}, {10, 1, 2}, {10, 3, 8}, {15, 1, 3},
    };
    ASSERT_EQ(r.log.size(), 9u);
    EXPECT_EQ(r.log, expected);
    EXPECT_EQ(sim.now(), 15u);
}

TEST(Simulator, ManyEventsComeOutSorted) {
    Simulator sim;
    Recorder r(sim);
    std::uint64_t x = 12345;
    for (std::uint32_t i = 0; i < 10000; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        sim.schedule((x >> 33) % 1000, r, 0, i);
    }
    sim.run();
    for (std::size_t i = 1; i < r.log.size(); ++i) {
        ASSERT_LE(r.log[i - 1].at, r.log[i].at);
        if (r.log[i - 1].at == r.log[i].at) {
            ASSERT_LT(r.log[i - 1].arg, r.log[i].arg);
        }
    }
}

// Events that schedule more events, at distances from 0 to far beyond the others (every bucket
// of the queue), run in the order of a plain priority queue on (time, scheduling order).
class Spawner final : public EventHandler {
public:
    explicit Spawner(Simulator& sim) : sim_(sim) {}
    void on_event(std::uint32_t, std::uint32_t arg) override {
        log.push_back({sim_.now(), arg});
        for (int i = 0; i < 2 && scheduled_ < kEvents; ++i) {
            x_ = x_ * 6364136223846793005ULL + 1442695040888963407ULL;
            const std::uint64_t r = x_ >> 33;
            // Mostly near (ties and small gaps), sometimes anywhere up to 2^40 ahead.
            const Time delay = r % 4 == 0   ? 0
                               : r % 4 == 1 ? r % 16
                               : r % 4 == 2 ? r % 5000
                                            : (r << 9) >> (r % 40);
            sim_.schedule(sim_.now() + delay, *this, 0, scheduled_);
            reference_.push({sim_.now() + delay, scheduled_});
            ++scheduled_;
        }
    }
    void start() {
        // One far in the future: its time differs from the others' in the highest bit.
        for (const Time at : {Time{0}, Time{7}, Time{0}, Time{1} << 63}) {
            sim_.schedule(at, *this, 0, scheduled_);
            reference_.push({at, scheduled_++});
        }
    }
    // The order a priority queue on (time, scheduling order) gives.
    std::vector<std::pair<Time, std::uint32_t>> expected() {
        std::vector<std::pair<Time, std::uint32_t>> order;
        for (; !reference_.empty(); reference_.pop()) order.push_back(reference_.top());
        return order;
    }
    std::vector<std::pair<Time, std::uint32_t>> log;

private:
    static constexpr std::uint32_t kEvents = 200000;
    Simulator& sim_;
    std::uint64_t x_ = 99;
    std::uint32_t scheduled_ = 0;
    std::priority_queue<std::pair<Time, std::uint32_t>, std::vector<std::pair<Time, std::uint32_t>>,
                        std::greater<>>
        reference_;
};

TEST(Simulator, AgreesWithAPriorityQueueOnTimeThenOrder) {
    Simulator sim;
    Spawner s(sim);
    s.start();
    const std::uint64_t ran = sim.run();
    EXPECT_EQ(ran, s.log.size());
    const auto expected = s.expected();
    ASSERT_EQ(s.log.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        ASSERT_EQ(s.log[i], expected[i]) << "event " << i;
    }
    // Scheduling goes on after a run, from where it ended.
    const Time end = sim.now();
    s.log.clear();
    sim.schedule(end + 3, s, 0, 1u << 31);
    sim.schedule(end, s, 0, (1u << 31) + 1);
    EXPECT_EQ(sim.run(), 2u);
    ASSERT_EQ(s.log.size(), 2u);
    EXPECT_EQ(s.log[0], std::make_pair(end, (1u << 31) + 1));
    EXPECT_EQ(s.log[1], std::make_pair(end + 3, 1u << 31));
}

TEST(Time, ConvertsExactly) {
    EXPECT_EQ(from_us(12.5), 12'500'000u);
    EXPECT_DOUBLE_EQ(to_us(from_us(3.0)), 3.0);
    EXPECT_EQ(transfer_time(160, 160.0), 1'000'000u);  // 160 bytes at 160 MB/s: 1 us
    EXPECT_EQ(transfer_time(1000, 0), 0u);
}

}  // namespace
}  // namespace nicsim::sim
