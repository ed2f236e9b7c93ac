// Plots as SVG: lines through our points, hollow squares for a paper's values. Used for the
// reproductions (`make repro`: the paper's points and ours on the same axes) and by `nicsim plot`
// (`./bootstrap bench`). No plotting package: a figure is a few lines and markers, written by hand
// so that nothing needs installing and the output is the same on every run.
#pragma once

#include <string>
#include <vector>

namespace nicsim::sim {

struct Series {
    std::string label;
    std::vector<double> x, y;
    bool paper = false;  // the paper's values: hollow squares; ours: dots, joined unless categories
};

struct Figure {
    std::string file;   // name under the output directory, without .svg
    std::string title;  // the paper's figure or table, and what is drawn
    std::string x_label, y_label;
    bool log_x = false, log_y = false;
    std::vector<std::string> x_ticks;  // categories at x = 1, 2, ... instead of numbers
    std::vector<Series> series;
};

// The figure as an SVG document.
std::string svg(const Figure& figure);

}  // namespace nicsim::sim
