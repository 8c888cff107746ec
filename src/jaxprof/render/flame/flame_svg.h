// A self-contained interactive SVG flamegraph: no external scripts, fonts or links. Hovering a
// frame shows its full name, time and share; clicking zooms into it; clicking the root resets.
// Frame names are untrusted profile text: they are XML-escaped (invalid UTF-8 and characters
// XML forbids are replaced) and the script only ever reads them as text.
#pragma once

#include <string>
#include <string_view>

#include "jaxprof/analysis/flame/flame.h"

namespace jaxprof {

struct FlameSvgOptions {
  std::string title = "jaxprof flame";
  int width = 1200;  // pixels
  // Frames lighter than this fraction of the whole are left out (with their children), which
  // bounds the file for huge trees; zooming cannot reveal them.
  double min_fraction = 1e-6;
  // For an SVG inside an HTML page: its script lays the frames out again at the width of the
  // element that holds it (on load and when the window is resized), in real pixels, so that the
  // graph fills the page and labels are fitted to the frames' drawn widths.
  bool fluid = false;
};

// Text made safe for XML character data and attribute values.
std::string xml_escape(std::string_view text);

std::string render_flame_svg(const FlameTree& tree, const FlameSvgOptions& options = {});

}  // namespace jaxprof
