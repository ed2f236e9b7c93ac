// The event core: events run by time, then in the order they were scheduled, including events
// scheduled while others run.
#include <gtest/gtest.h>

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

TEST(Time, ConvertsExactly) {
    EXPECT_EQ(from_us(12.5), 12'500'000u);
    EXPECT_DOUBLE_EQ(to_us(from_us(3.0)), 3.0);
    EXPECT_EQ(transfer_time(160, 160.0), 1'000'000u);  // 160 bytes at 160 MB/s: 1 us
    EXPECT_EQ(transfer_time(1000, 0), 0u);
}

}  // namespace
}  // namespace nicsim::sim
