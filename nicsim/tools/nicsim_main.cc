// The nicsim command. The modeled network and its subcommands arrive with the simulator; for now
// the command reports its version and the engine's algorithm tables.
#include <cstdio>
#include <cstring>

#include "nicsim/nicsim.h"

namespace {

constexpr const char* kUsage =
    "usage: nicsim [--version | --help | algorithms]\n"
    "\n"
    "  --version    print the engine version\n"
    "  --help       print this text\n"
    "  algorithms   list the engine's collective algorithms\n";

int list_algorithms() {
    std::printf("barrier:\n");
    for (int i = 0; i < nicsim_algorithm_count(NICSIM_COLL_BARRIER); ++i) {
        std::printf("  %-20s %s%s\n", nicsim_algorithm_name(NICSIM_COLL_BARRIER, i),
                    nicsim_algorithm_description(NICSIM_COLL_BARRIER, i),
                    i == 0 ? " (default)" : "");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("nicsim %s\n", nicsim_version());
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "algorithms") == 0) return list_algorithms();
    if (argc == 1) {
        std::fputs(kUsage, stderr);
    } else {
        std::fprintf(stderr, "nicsim: %s: unknown command or option (see nicsim --help)\n", argv[1]);
    }
    return 2;
}
