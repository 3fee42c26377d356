#include "codec/jpeg_cpu.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "codec/exif.h"

namespace sluice {

namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  int bad_warning;  // first data-corruption warning code, 0 if none
  char message[JMSG_LENGTH_MAX];
};

void OnErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

bool IsCorruptionWarning(int code) {
  return code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE ||
         code == JWRN_MUST_RESYNC || code == JWRN_BOGUS_PROGRESSION;
}

void OnEmitMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  const int code = cinfo->err->msg_code;
  if (err->bad_warning == 0 && IsCorruptionWarning(code)) {
    err->bad_warning = code;
    (*cinfo->err->format_message)(cinfo, err->message);
  }
}

void OnOutputMessage(j_common_ptr) {}  // never print

// A progressive JPEG has about 10 scans; thousands of tiny ones (a few hundred KB can hold them)
// make decoding take minutes, each scan being a pass over the whole image's coefficients.
void OnProgress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number <= kMaxJpegScans) return;
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  std::snprintf(err->message, sizeof(err->message), "more than %d scans (a progressive JPEG has about 10)",
                kMaxJpegScans);
  std::longjmp(err->jump, 1);
}

const char* SubsamplingName(const jpeg_decompress_struct& c) {
  if (c.num_components == 1) return "gray";
  if (c.num_components != 3) return "other";
  const jpeg_component_info* ci = c.comp_info;
  if (ci[1].h_samp_factor != 1 || ci[1].v_samp_factor != 1 || ci[2].h_samp_factor != 1 ||
      ci[2].v_samp_factor != 1)
    return "other";
  const int h = ci[0].h_samp_factor, v = ci[0].v_samp_factor;
  if (h == 1 && v == 1) return "444";
  if (h == 2 && v == 1) return "422";
  if (h == 2 && v == 2) return "420";
  if (h == 1 && v == 2) return "440";
  if (h == 4 && v == 1) return "411";
  return "other";
}

int OrientationFromMarkers(const jpeg_decompress_struct& c) {
  for (jpeg_saved_marker_ptr m = c.marker_list; m != nullptr; m = m->next) {
    if (m->marker == JPEG_APP0 + 1) {
      int o = ExifOrientationFromApp1(m->data, m->data_length);
      if (o != 1) return o;
    }
  }
  return 1;
}

// PIL's cmyk2rgb on PIL's internal CMYK; Adobe files hold inverted values ("CMYK;I").
inline uint8_t MulDiv255(int a, int b) {
  const int t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

void CmykRowToRgb(const uint8_t* in, uint8_t* out, int width, bool inverted) {
  for (int x = 0; x < width; ++x, in += 4, out += 3) {
    const int c = inverted ? 255 - in[0] : in[0];
    const int m = inverted ? 255 - in[1] : in[1];
    const int y = inverted ? 255 - in[2] : in[2];
    const int nk = inverted ? in[3] : 255 - in[3];
    out[0] = static_cast<uint8_t>(nk - MulDiv255(c, nk));
    out[1] = static_cast<uint8_t>(nk - MulDiv255(m, nk));
    out[2] = static_cast<uint8_t>(nk - MulDiv255(y, nk));
  }
}

}  // namespace

bool JpegScanLooksIntact(const uint8_t* d, size_t n) {
  size_t i = 2;  // after SOI: walk the marker segments to the first scan
  for (;;) {
    if (i + 4 > n || d[i] != 0xFF) return false;
    const uint8_t m = d[i + 1];
    if (m == 0xFF) {
      ++i;
      continue;
    }
    i += 2 + (static_cast<size_t>(d[i + 2]) << 8 | d[i + 3]);
    if (m == 0xDA) break;
  }
  while (i + 1 < n) {
    const void* ff = std::memchr(d + i, 0xFF, n - 1 - i);
    if (ff == nullptr) return false;
    i = static_cast<size_t>(static_cast<const uint8_t*>(ff) - d);
    const uint8_t m = d[i + 1];
    if (m == 0xD9) return true;
    if (m != 0x00 && m != 0xFF && (m < 0xD0 || m > 0xD7)) return false;
    i += m == 0xFF ? 1 : 2;
  }
  return false;
}

int JpegScanCount(const uint8_t* d, size_t n) {
  int scans = 0;
  size_t i = 2;  // after SOI
  while (i + 4 <= n && d[i] == 0xFF) {
    const uint8_t m = d[i + 1];
    if (m == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (m == 0xD9) break;  // EOI
    i += 2 + (static_cast<size_t>(d[i + 2]) << 8 | d[i + 3]);
    if (m != 0xDA) continue;
    ++scans;
    // The entropy-coded data runs to the next marker that is not stuffing or a restart.
    while (i + 1 < n) {
      const void* ff = std::memchr(d + i, 0xFF, n - 1 - i);
      if (ff == nullptr) return scans;
      i = static_cast<size_t>(static_cast<const uint8_t*>(ff) - d);
      const uint8_t next = d[i + 1];
      if (next != 0x00 && next != 0xFF && (next < 0xD0 || next > 0xD7)) break;
      i += next == 0xFF ? 1 : 2;
    }
  }
  return scans;
}

bool JpegHasEndMarker(const uint8_t* data, size_t size) {
  constexpr size_t kTail = 64 * 1024;
  const size_t start = size > kTail ? size - kTail : 0;
  for (size_t i = size; i >= start + 2; --i) {
    if (data[i - 2] == 0xFF && data[i - 1] == 0xD9) return true;
  }
  return false;
}

namespace {

}  // namespace

struct JpegDecoder::Impl {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  jpeg_progress_mgr progress;
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool header_ready = false;
  std::vector<uint8_t> cmyk_rows;
};

JpegDecoder::JpegDecoder() : impl_(std::make_unique<Impl>()) {
  std::memset(&impl_->cinfo, 0, sizeof(impl_->cinfo));
  impl_->cinfo.err = jpeg_std_error(&impl_->err.pub);
  impl_->err.pub.error_exit = OnErrorExit;
  impl_->err.pub.emit_message = OnEmitMessage;
  impl_->err.pub.output_message = OnOutputMessage;
  jpeg_create_decompress(&impl_->cinfo);
  std::memset(&impl_->progress, 0, sizeof(impl_->progress));
  impl_->progress.progress_monitor = OnProgress;
  impl_->cinfo.progress = &impl_->progress;
}

JpegDecoder::~JpegDecoder() { jpeg_destroy_decompress(&impl_->cinfo); }

// The two functions below keep only trivially destructible locals between setjmp and the
// calls that may longjmp.
Result<ImageInfo> JpegDecoder::ReadHeader(const uint8_t* data, size_t size) {
  Impl& s = *impl_;
  jpeg_abort_decompress(&s.cinfo);
  s.header_ready = false;
  s.data = data;
  s.size = size;
  s.err.bad_warning = 0;
  if (size == 0) return CorruptData("empty file");
  if (setjmp(s.err.jump)) {
    jpeg_abort_decompress(&s.cinfo);
    // Running out of data makes libjpeg read a fake end marker, and the error it then raises
    // ("Bogus marker length", ...) hides the cause.
    if (s.err.bad_warning == JWRN_JPEG_EOF)
      return CorruptData("truncated JPEG header: premature end of data, then: ", s.err.message);
    return CorruptData("corrupt JPEG header: ", s.err.message);
  }
  jpeg_mem_src(&s.cinfo, data, static_cast<unsigned long>(size));
  jpeg_save_markers(&s.cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&s.cinfo, TRUE);
  if (s.err.bad_warning != 0) {
    jpeg_abort_decompress(&s.cinfo);
    if (s.err.bad_warning == JWRN_JPEG_EOF)
      return CorruptData("truncated JPEG header: ", s.err.message);
    return CorruptData("corrupt JPEG header: ", s.err.message);
  }
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.width = static_cast<int>(s.cinfo.image_width);
  info.height = static_cast<int>(s.cinfo.image_height);
  info.components = s.cinfo.num_components;
  info.progressive = s.cinfo.progressive_mode != 0;
  info.subsampling = SubsamplingName(s.cinfo);
  info.orientation = OrientationFromMarkers(s.cinfo);
  s.header_ready = true;
  return info;
}

Result<Rect> JpegDecoder::Decode(const DecodeRequest& req, std::vector<uint8_t>* pixels) {
  Impl& s = *impl_;
  if (!s.header_ready) return FailedPrecondition("JpegDecoder::Decode without a header");
  s.header_ready = false;
  const int denom = req.scale_denom;
  if (denom != 1 && denom != 2 && denom != 4 && denom != 8) {
    jpeg_abort_decompress(&s.cinfo);
    return InvalidArgument("JPEG scale denominator must be 1, 2, 4 or 8, got ", denom);
  }
  const bool cmyk = s.cinfo.jpeg_color_space == JCS_CMYK || s.cinfo.jpeg_color_space == JCS_YCCK;
  const bool inverted = cmyk && s.cinfo.saw_Adobe_marker;
  if (setjmp(s.err.jump)) {
    jpeg_abort_decompress(&s.cinfo);
    if (s.err.bad_warning == JWRN_JPEG_EOF)  // see ReadHeader
      return CorruptData("truncated JPEG: premature end of data, then: ", s.err.message);
    return CorruptData("corrupt JPEG data: ", s.err.message);
  }
  s.cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  s.cinfo.scale_num = 1;
  s.cinfo.scale_denom = static_cast<unsigned>(denom);
  s.cinfo.dct_method = JDCT_ISLOW;
  s.cinfo.do_fancy_upsampling = TRUE;
  jpeg_start_decompress(&s.cinfo);
  const int out_w = static_cast<int>(s.cinfo.output_width);
  const int out_h = static_cast<int>(s.cinfo.output_height);
  const Rect roi = req.roi;
  if (roi.w <= 0 || roi.h <= 0 || roi.x < 0 || roi.y < 0 || roi.x + roi.w > out_w ||
      roi.y + roi.h > out_h) {
    jpeg_abort_decompress(&s.cinfo);
    return InvalidArgument("decode region (", roi.x, ",", roi.y, ",", roi.w, "x", roi.h,
                           ") outside the ", out_w, "x", out_h, " image");
  }
  // One extra column each side: with horizontal chroma subsampling, fancy upsampling of a
  // column at the cut needs its neighbour, so the edge columns of a crop are not exact.
  const int x0 = roi.x > 0 ? roi.x - 1 : 0;
  const int x1 = roi.x + roi.w < out_w ? roi.x + roi.w + 1 : out_w;
  JDIMENSION xoff = static_cast<JDIMENSION>(x0), cw = static_cast<JDIMENSION>(x1 - x0);
  if (x1 - x0 < out_w) jpeg_crop_scanline(&s.cinfo, &xoff, &cw);
  const size_t row_bytes = static_cast<size_t>(cw) * 3;
  pixels->resize(row_bytes * static_cast<size_t>(roi.h));
  if (cmyk) s.cmyk_rows.resize(static_cast<size_t>(cw) * 4 * 16);
  if (roi.y > 0) jpeg_skip_scanlines(&s.cinfo, static_cast<JDIMENSION>(roi.y));
  int done = 0;
  while (done < roi.h) {
    JSAMPROW rows[16];
    const int want = roi.h - done < 16 ? roi.h - done : 16;
    for (int i = 0; i < want; ++i) {
      rows[i] = cmyk ? s.cmyk_rows.data() + static_cast<size_t>(i) * cw * 4
                     : pixels->data() + row_bytes * static_cast<size_t>(done + i);
    }
    const int got =
        static_cast<int>(jpeg_read_scanlines(&s.cinfo, rows, static_cast<JDIMENSION>(want)));
    if (got <= 0) break;
    if (cmyk) {
      for (int i = 0; i < got; ++i)
        CmykRowToRgb(rows[i], pixels->data() + row_bytes * static_cast<size_t>(done + i),
                     static_cast<int>(cw), inverted);
    }
    done += got;
  }
  const bool reached_end = s.cinfo.output_scanline >= s.cinfo.output_height;
  jpeg_abort_decompress(&s.cinfo);
  if (s.err.bad_warning != 0) {
    if (s.err.bad_warning == JWRN_JPEG_EOF) return CorruptData("truncated JPEG: ", s.err.message);
    return CorruptData("corrupt JPEG data: ", s.err.message);
  }
  if (done < roi.h) return CorruptData("corrupt JPEG data: decoder stopped early");
  if (!reached_end && !JpegHasEndMarker(s.data, s.size))
    return CorruptData("truncated JPEG: no end-of-image marker");
  return Rect{static_cast<int>(xoff), roi.y, static_cast<int>(cw), roi.h};
}

namespace {
struct CompressState {
  jpeg_compress_struct cinfo;
  ErrorManager err;
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
};
}  // namespace

Result<std::vector<uint8_t>> EncodeJpeg(const ImageView& image, int quality,
                                        const char* subsampling, bool progressive,
                                        int exif_orientation) {
  if (image.channels != 1 && image.channels != 3)
    return InvalidArgument("EncodeJpeg: channels must be 1 or 3, got ", image.channels);
  if (image.width <= 0 || image.height <= 0 || image.width > 65500 || image.height > 65500)
    return InvalidArgument("EncodeJpeg: bad size ", image.width, "x", image.height);
  if (quality < 1 || quality > 100)
    return InvalidArgument("EncodeJpeg: quality must be in [1, 100], got ", quality);
  int h = 1, v = 1;
  const std::string sub = subsampling;
  if (sub == "422") {
    h = 2;
  } else if (sub == "420") {
    h = 2;
    v = 2;
  } else if (sub != "444") {
    return InvalidArgument("EncodeJpeg: subsampling must be '444', '422' or '420', got '", sub,
                           "'");
  }
  auto st = std::make_unique<CompressState>();
  st->cinfo.err = jpeg_std_error(&st->err.pub);
  st->err.pub.error_exit = OnErrorExit;
  st->err.pub.output_message = OnOutputMessage;
  if (setjmp(st->err.jump)) {
    jpeg_destroy_compress(&st->cinfo);
    std::free(st->out);
    return Internal("EncodeJpeg: ", st->err.message);
  }
  jpeg_create_compress(&st->cinfo);
  jpeg_mem_dest(&st->cinfo, &st->out, &st->out_size);
  st->cinfo.image_width = static_cast<JDIMENSION>(image.width);
  st->cinfo.image_height = static_cast<JDIMENSION>(image.height);
  st->cinfo.input_components = image.channels;
  st->cinfo.in_color_space = image.channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&st->cinfo);
  jpeg_set_quality(&st->cinfo, quality, TRUE);
  if (image.channels == 3) {
    st->cinfo.comp_info[0].h_samp_factor = h;
    st->cinfo.comp_info[0].v_samp_factor = v;
    for (int c = 1; c < 3; ++c) {
      st->cinfo.comp_info[c].h_samp_factor = 1;
      st->cinfo.comp_info[c].v_samp_factor = 1;
    }
  }
  if (progressive) jpeg_simple_progression(&st->cinfo);
  jpeg_start_compress(&st->cinfo, TRUE);
  if (exif_orientation >= 2 && exif_orientation <= 8) {
    // "Exif\0\0" + little-endian TIFF header + one IFD entry (Orientation, SHORT, 1).
    const uint8_t app1[] = {'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0,
                            1,   0,   0x12, 0x01, 3, 0, 1, 0, 0, 0,
                            static_cast<uint8_t>(exif_orientation), 0, 0, 0, 0, 0, 0, 0};
    jpeg_write_marker(&st->cinfo, JPEG_APP0 + 1, app1, sizeof(app1));
  }
  while (st->cinfo.next_scanline < st->cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.row(static_cast<int>(st->cinfo.next_scanline)));
    jpeg_write_scanlines(&st->cinfo, &row, 1);
  }
  jpeg_finish_compress(&st->cinfo);
  std::vector<uint8_t> bytes(st->out, st->out + st->out_size);
  jpeg_destroy_compress(&st->cinfo);
  std::free(st->out);
  return bytes;
}

}  // namespace sluice
