#include "inspect/png_render.h"

#include <cairo.h>
#include <librsvg/rsvg.h>

#include <cmath>
#include <memory>

#include "core/atomic_file.h"
#include "core/error.h"

namespace attn::inspect {
namespace {

struct GObjectUnref {
  void operator()(void* p) const { g_object_unref(p); }
};
struct SurfaceDestroy {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDestroy {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};

cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// Pango keeps per-thread font maps and fontconfig patterns (some made on its own font-matching
// thread) until the process ends, and LeakSanitizer counts them as leaks of every program that
// draws text; they are not ours to free. Everything this file allocates is freed (RAII above).
extern "C" const char* __lsan_default_suppressions() { return "leak:libfontconfig.so\nleak:libpango\n"; }
#endif

std::string render_png(std::string_view svg, double scale, const std::string& name) {
  if (!(scale > 0) || !std::isfinite(scale)) throw_in(name, "PNG scale must be a positive number");
  GError* error = nullptr;
  std::unique_ptr<RsvgHandle, GObjectUnref> handle(
      rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error));
  if (!handle) {
    const std::string message = error ? error->message : "unknown error";
    if (error) g_error_free(error);
    throw_in(name, "cannot read the SVG: " + message);
  }
  gdouble width = 0, height = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle.get(), &width, &height) || !(width > 0) || !(height > 0))
    throw_in(name, "the SVG has no width and height in pixels");
  const double pw = std::ceil(width * scale), ph = std::ceil(height * scale);
  if (pw > kMaxPngSide || ph > kMaxPngSide)
    throw_in(name, "the picture would be " + std::to_string(static_cast<long>(pw)) + " x " +
                       std::to_string(static_cast<long>(ph)) + " pixels; at most " + std::to_string(kMaxPngSide) +
                       " a side (use a smaller scale)");
  std::unique_ptr<cairo_surface_t, SurfaceDestroy> surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(pw), static_cast<int>(ph)));
  if (const cairo_status_t status = cairo_surface_status(surface.get()); status != CAIRO_STATUS_SUCCESS)
    throw_in(name, std::string("cannot create the image: ") + cairo_status_to_string(status));
  std::unique_ptr<cairo_t, ContextDestroy> cr(cairo_create(surface.get()));
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  const RsvgRectangle viewport{0, 0, pw, ph};
  if (!rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &error)) {
    const std::string message = error ? error->message : "unknown error";
    if (error) g_error_free(error);
    throw_in(name, "cannot render the SVG: " + message);
  }
  if (cairo_status(cr.get()) != CAIRO_STATUS_SUCCESS)
    throw_in(name, std::string("cannot render the SVG: ") + cairo_status_to_string(cairo_status(cr.get())));
  cairo_surface_flush(surface.get());
  std::string png;
  const cairo_status_t status = cairo_surface_write_to_png_stream(surface.get(), append_to_string, &png);
  if (status != CAIRO_STATUS_SUCCESS)
    throw_in(name, std::string("cannot encode the PNG: ") + cairo_status_to_string(status));
  return png;
}

void write_png(const std::filesystem::path& file, std::string_view svg, double scale) {
  write_file_atomic(file, render_png(svg, scale, file.string()));
}

}  // namespace attn::inspect
