// Tensor shapes: a list of dimension sizes, outermost first (NCHW for images).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace gantry {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  // Negative i counts from the back, as in Python.
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i < 0 ? i + rank() : i)]; }
  int64_t numel() const;
  const std::vector<int64_t>& dims() const { return dims_; }
  std::string ToString() const;  // "[64,1,28,28]"

  bool operator==(const Shape& other) const = default;

 private:
  std::vector<int64_t> dims_;
};

}  // namespace gantry
