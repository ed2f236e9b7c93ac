#include "sim/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nicsim::sim {

namespace {

constexpr double kWidth = 720, kHeight = 400;
constexpr double kLeft = 70, kRight = 250, kTop = 40, kBottom = 50;  // margins around the axes
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string escape(const std::string& s) {
    std::string out;
    for (const char c : s) {
        if (c == '<') {
            out += "&lt;";
        } else if (c == '>') {
            out += "&gt;";
        } else if (c == '&') {
            out += "&amp;";
        } else {
            out += c;
        }
    }
    return out;
}

// One axis: its range, how a value maps to a pixel, and where its ticks go.
struct Axis {
    double low, high;
    bool log;
    double to(double v, double from_px, double to_px) const {
        const double a = log ? std::log10(low) : low, b = log ? std::log10(high) : high;
        const double t = ((log ? std::log10(v) : v) - a) / (b - a);
        return from_px + t * (to_px - from_px);
    }
    std::vector<double> ticks() const {
        std::vector<double> out;
        if (log) {
            for (double p = std::pow(10, std::floor(std::log10(low))); p <= high * 1.0001;
                 p *= 10) {
                if (p >= low * 0.9999) out.push_back(p);
            }
            if (out.size() >= 2) return out;
        }
        const double step0 = (high - low) / 5;
        const double mag = std::pow(10, std::floor(std::log10(step0)));
        double step = mag;
        for (const double m : {1.0, 2.0, 5.0, 10.0}) {
            if (mag * m >= step0) {
                step = mag * m;
                break;
            }
        }
        for (double v = std::ceil(low / step) * step; v <= high + step * 1e-9; v += step) {
            out.push_back(v);
        }
        return out;
    }
};

Axis axis(const std::vector<const std::vector<double>*>& values, bool log) {
    double low = INFINITY, high = -INFINITY;
    for (const auto* vs : values) {
        for (const double v : *vs) {
            if (log && v <= 0) continue;
            low = std::min(low, v);
            high = std::max(high, v);
        }
    }
    if (!(low < high)) {  // one value, or none
        low = std::isfinite(low) ? low : 0;
        high = low + 1;
        if (log) high = low * 10;
    }
    if (log) return {low / 1.2, high * 1.2, true};
    const double pad = (high - low) * 0.05;
    return {low >= 0 && low - pad < 0 ? 0 : low - pad, high + pad, false};
}

}  // namespace

std::string svg(const Figure& f) {
    std::vector<const std::vector<double>*> xs, ys;
    for (const Series& s : f.series) {
        xs.push_back(&s.x);
        ys.push_back(&s.y);
    }
    std::vector<double> category_range;
    if (!f.x_ticks.empty()) {
        category_range = {0.5, static_cast<double>(f.x_ticks.size()) + 0.5};
        xs = {&category_range};
    }
    const Axis ax = axis(xs, f.log_x), ay = axis(ys, f.log_y);
    const double x0 = kLeft, x1 = kWidth - kRight, y0 = kHeight - kBottom, y1 = kTop;
    std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) +
                      "\" height=\"" + num(kHeight) +
                      "\" font-family=\"sans-serif\" font-size=\"11\">\n"
                      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                      "<text x=\"" +
                      num(kWidth / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"13\">" +
                      escape(f.title) +
                      "</text>\n"
                      "<rect x=\"" +
                      num(x0) + "\" y=\"" + num(y1) + "\" width=\"" + num(x1 - x0) +
                      "\" height=\"" + num(y0 - y1) + "\" fill=\"none\" stroke=\"black\"/>\n";
    if (f.x_ticks.empty()) {
        for (const double t : ax.ticks()) {
            const double px = ax.to(t, x0, x1);
            out += "<line x1=\"" + num(px) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(px) +
                   "\" y2=\"" + num(y0 + 4) + "\" stroke=\"black\"/><text x=\"" + num(px) +
                   "\" y=\"" + num(y0 + 16) + "\" text-anchor=\"middle\">" + num(t) + "</text>\n";
        }
    } else {
        for (std::size_t i = 0; i < f.x_ticks.size(); ++i) {
            const double px = ax.to(static_cast<double>(i + 1), x0, x1);
            out += "<text x=\"" + num(px) + "\" y=\"" + num(y0 + 16) +
                   "\" text-anchor=\"middle\">" + escape(f.x_ticks[i]) + "</text>\n";
        }
    }
    for (const double t : ay.ticks()) {
        const double py = ay.to(t, y0, y1);
        out += "<line x1=\"" + num(x0 - 4) + "\" y1=\"" + num(py) + "\" x2=\"" + num(x1) +
               "\" y2=\"" + num(py) + "\" stroke=\"#ddd\"/><text x=\"" + num(x0 - 6) + "\" y=\"" +
               num(py + 4) + "\" text-anchor=\"end\">" + num(t) + "</text>\n";
    }
    out += "<text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(kHeight - 12) +
           "\" text-anchor=\"middle\">" + escape(f.x_label) + "</text>\n";
    out += "<text transform=\"translate(16," + num((y0 + y1) / 2) +
           ") rotate(-90)\" text-anchor=\"middle\">" + escape(f.y_label) + "</text>\n";
    for (std::size_t i = 0; i < f.series.size(); ++i) {
        const Series& s = f.series[i];
        const std::string colour = kColours[i % (sizeof kColours / sizeof kColours[0])];
        std::string points;
        for (std::size_t j = 0; j < s.x.size() && j < s.y.size(); ++j) {
            if ((f.log_x && s.x[j] <= 0) || (f.log_y && s.y[j] <= 0)) continue;
            const double px = ax.to(s.x[j], x0, x1), py = ay.to(s.y[j], y0, y1);
            points += num(px) + "," + num(py) + " ";
            out += s.paper ? "<rect x=\"" + num(px - 4) + "\" y=\"" + num(py - 4) +
                                 "\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"" + colour +
                                 "\" stroke-width=\"2\"/>\n"
                           : "<circle cx=\"" + num(px) + "\" cy=\"" + num(py) +
                                 "\" r=\"3\" fill=\"" + colour + "\"/>\n";
        }
        if (!s.paper && s.x.size() > 1 && f.x_ticks.empty()) {  // categories are not joined
            out += "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + colour +
                   "\" stroke-width=\"1.5\"/>\n";
        }
        const double ly = y1 + 14 + 18 * static_cast<double>(i);
        out += s.paper ? "<rect x=\"" + num(x1 + 12) + "\" y=\"" + num(ly - 8) +
                             "\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"" + colour +
                             "\" stroke-width=\"2\"/>"
                       : "<line x1=\"" + num(x1 + 8) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" +
                             num(x1 + 24) + "\" y2=\"" + num(ly - 4) + "\" stroke=\"" + colour +
                             "\" stroke-width=\"2\"/>";
        out += "<text x=\"" + num(x1 + 30) + "\" y=\"" + num(ly) + "\">" + escape(s.label) +
               "</text>\n";
    }
    out += "</svg>\n";
    return out;
}

}  // namespace nicsim::sim
