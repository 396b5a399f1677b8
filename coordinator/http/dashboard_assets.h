// The dashboard's static files (coordinator/http/dashboard/), compiled into the binary by
// coordinator/http/embed_assets.cmake at build time: no file is read at run time, and
// nothing is fetched from anywhere when the page loads.
#pragma once

#include <string_view>
#include <vector>

namespace gantry {

struct DashboardAsset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;
  std::string_view bytes;
};

const std::vector<DashboardAsset>& DashboardAssets();

}  // namespace gantry
