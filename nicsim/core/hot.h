// Marks the engine's functions that every collective runs through, per call or per packet, on
// the real fabrics and the modeled network alike. GCC places them together (.text.hot), so that
// a call's code spans a few pages and spreads over the instruction cache's sets instead of lying
// scattered over the library (docs/measurements.md, Small messages on 2 ranks). The component's
// own are NICOLL_HOT_PATH (coll/coll_nicoll.h).
#pragma once

#define NICSIM_HOT_PATH [[gnu::hot]]
