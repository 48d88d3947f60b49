#pragma once
// The dashboard's static files (service/dashboard/, and Chart.js from Debian's libjs-chart.js),
// built into the binary by cmake/embed_assets.cmake: no network and no files at run time.
#include <cstddef>
#include <string>

namespace troupe::service {

struct web_asset {
  const char* path;  // "/index.html", "/dashboard.js", "/chart.min.js"
  const char* content_type;
  const unsigned char* data;
  std::size_t size;
};

// The file served at `path` ("/" is /index.html); nullptr when there is none.
const web_asset* dashboard_asset(const std::string& path);

}  // namespace troupe::service
