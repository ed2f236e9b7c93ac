/* The MPI tests' clock: CLOCK_MONOTONIC in microseconds, and a busy wait that makes a rank late
 * without giving up its core. */
#ifndef NICOLL_TEST_SPIN_H
#define NICOLL_TEST_SPIN_H

#include <time.h>

static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static inline void spin_us(double us)
{
    double until = now_us() + us;
    while (now_us() < until) {
    }
}

#endif /* NICOLL_TEST_SPIN_H */
