// GoogleTest main that reports in TAP instead of GoogleTest's own printer, so automake's
// tap-driver counts every test case. Failure details become TAP comments.
#include <gtest/gtest.h>

#include <cstdio>

namespace {

class TapListener : public testing::EmptyTestEventListener {
public:
    void OnTestProgramStart(const testing::UnitTest& unit) override {
        std::printf("1..%d\n", unit.test_to_run_count());
    }
    void OnTestPartResult(const testing::TestPartResult& part) override {
        if (part.failed()) {
            std::printf("# %s:%d: %s\n", part.file_name() ? part.file_name() : "?",
                        part.line_number(), part.summary());
        }
    }
    void OnTestEnd(const testing::TestInfo& info) override {
        const bool failed = info.result()->Failed();
        std::printf("%s %d - %s.%s%s\n", failed ? "not ok" : "ok", ++number_,
                    info.test_suite_name(), info.name(),
                    info.result()->Skipped() ? " # SKIP" : "");
        std::fflush(stdout);
    }

private:
    int number_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new TapListener);
    return RUN_ALL_TESTS();
}
