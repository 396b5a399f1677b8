#include "worker/monitor/plot_canvas.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "worker/formats/png_encode.h"

namespace gantry {
namespace {

// A 3x5 glyph: five rows, top first, each three characters ('#' set, '.' clear).
struct Glyph {
  char c;
  const char* rows[5];
};

// Drawn for this file: enough for axis numbers, units and titles.
constexpr Glyph kFont[] = {
    {'0', {"###", "#.#", "#.#", "#.#", "###"}}, {'1', {".#.", "##.", ".#.", ".#.", "###"}},
    {'2', {"###", "..#", "###", "#..", "###"}}, {'3', {"###", "..#", ".##", "..#", "###"}},
    {'4', {"#.#", "#.#", "###", "..#", "..#"}}, {'5', {"###", "#..", "###", "..#", "###"}},
    {'6', {"###", "#..", "###", "#.#", "###"}}, {'7', {"###", "..#", ".#.", ".#.", ".#."}},
    {'8', {"###", "#.#", "###", "#.#", "###"}}, {'9', {"###", "#.#", "###", "..#", "###"}},
    {'A', {".#.", "#.#", "###", "#.#", "#.#"}}, {'B', {"##.", "#.#", "##.", "#.#", "##."}},
    {'C', {".##", "#..", "#..", "#..", ".##"}}, {'D', {"##.", "#.#", "#.#", "#.#", "##."}},
    {'E', {"###", "#..", "##.", "#..", "###"}}, {'F', {"###", "#..", "##.", "#..", "#.."}},
    {'G', {".##", "#..", "#.#", "#.#", ".##"}}, {'H', {"#.#", "#.#", "###", "#.#", "#.#"}},
    {'I', {"###", ".#.", ".#.", ".#.", "###"}}, {'J', {"..#", "..#", "..#", "#.#", ".#."}},
    {'K', {"#.#", "#.#", "##.", "#.#", "#.#"}}, {'L', {"#..", "#..", "#..", "#..", "###"}},
    {'M', {"#.#", "###", "###", "#.#", "#.#"}}, {'N', {"##.", "#.#", "#.#", "#.#", "#.#"}},
    {'O', {".#.", "#.#", "#.#", "#.#", ".#."}}, {'P', {"##.", "#.#", "##.", "#..", "#.."}},
    {'Q', {".#.", "#.#", "#.#", "##.", ".##"}}, {'R', {"##.", "#.#", "##.", "#.#", "#.#"}},
    {'S', {".##", "#..", ".#.", "..#", "##."}}, {'T', {"###", ".#.", ".#.", ".#.", ".#."}},
    {'U', {"#.#", "#.#", "#.#", "#.#", "###"}}, {'V', {"#.#", "#.#", "#.#", "#.#", ".#."}},
    {'W', {"#.#", "#.#", "###", "###", "#.#"}}, {'X', {"#.#", "#.#", ".#.", "#.#", "#.#"}},
    {'Y', {"#.#", "#.#", ".#.", ".#.", ".#."}}, {'Z', {"###", "..#", ".#.", "#..", "###"}},
    {'.', {"...", "...", "...", "...", ".#."}}, {'-', {"...", "...", "###", "...", "..."}},
    {'+', {"...", ".#.", "###", ".#.", "..."}}, {'/', {"..#", "..#", ".#.", "#..", "#.."}},
    {'(', {".#.", "#..", "#..", "#..", ".#."}}, {')', {".#.", "..#", "..#", "..#", ".#."}},
    {':', {"...", ".#.", "...", ".#.", "..."}}, {'%', {"#.#", "..#", ".#.", "#..", "#.#"}},
    {'=', {"...", "###", "...", "###", "..."}}, {',', {"...", "...", "...", ".#.", "#.."}},
};

const Glyph* Find(char c) {
  const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const Glyph& g : kFont) {
    if (g.c == upper) return &g;
  }
  return nullptr;
}

}  // namespace

PlotCanvas::PlotCanvas(int width, int height, Rgb background)
    : width_(std::max(1, width)), height_(std::max(1, height)),
      rgb_(static_cast<size_t>(width_) * static_cast<size_t>(height_) * 3) {
  Fill(0, 0, width_ - 1, height_ - 1, background);
}

Rgb PlotCanvas::At(int x, int y) const {
  const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)) * 3;
  return {rgb_[i], rgb_[i + 1], rgb_[i + 2]};
}

void PlotCanvas::Fill(int x0, int y0, int x1, int y1, Rgb color) {
  const int left = std::max(0, std::min(x0, x1)), right = std::min(width_ - 1, std::max(x0, x1));
  const int top = std::max(0, std::min(y0, y1)), bottom = std::min(height_ - 1, std::max(y0, y1));
  for (int y = top; y <= bottom; ++y) {
    for (int x = left; x <= right; ++x) {
      const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)) * 3;
      rgb_[i] = color.r;
      rgb_[i + 1] = color.g;
      rgb_[i + 2] = color.b;
    }
  }
}

void PlotCanvas::Line(double x0, double y0, double x1, double y1, Rgb color, int thickness) {
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
  // Stamps a thickness-sized square at points one pixel apart along the segment.
  const double length = std::max(std::abs(x1 - x0), std::abs(y1 - y0));
  const int n = static_cast<int>(std::min(length, 1e5)) + 1;
  const int half = thickness / 2;
  for (int i = 0; i <= n; ++i) {
    const double t = static_cast<double>(i) / n;
    const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0)));
    const int y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
    Fill(x - half, y - half, x - half + thickness - 1, y - half + thickness - 1, color);
  }
}

void PlotCanvas::Text(int x, int y, const std::string& text, Rgb color, int scale) {
  for (size_t k = 0; k < text.size(); ++k) {
    const Glyph* g = Find(text[k]);
    if (g == nullptr) continue;
    const int gx = x + static_cast<int>(k) * 4 * scale;
    for (int row = 0; row < 5; ++row) {
      for (int col = 0; col < 3; ++col) {
        if (g->rows[row][col] != '#') continue;
        Fill(gx + col * scale, y + row * scale, gx + (col + 1) * scale - 1, y + (row + 1) * scale - 1, color);
      }
    }
  }
}

absl::StatusOr<std::string> PlotCanvas::EncodePng() const { return gantry::EncodePng(rgb_, width_, height_, 3); }

}  // namespace gantry
