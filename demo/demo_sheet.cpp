// gpuhandle-demo's contact sheet: the grid, a box-filter scaler and a PNG encoder over zlib.
#include "demo_sheet.h"

#include "gpuhandle_i18n.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <zlib.h>

namespace gpuhandle::demo {

namespace {

constexpr uint8_t kBackground[4] = { 32, 32, 36, 255 };

int even(int value)
{
	return std::max(2, value & ~1);
}

void putBigEndian(std::vector<uint8_t> &out, uint32_t value)
{
	for (int shift = 24; shift >= 0; shift -= 8)
		out.push_back(static_cast<uint8_t>(value >> shift));
}

// A PNG chunk: length, type, data, CRC-32 of type and data.
void putChunk(std::vector<uint8_t> &out, const char type[4], const uint8_t *data, size_t size)
{
	putBigEndian(out, static_cast<uint32_t>(size));
	const size_t typeAt = out.size();
	out.insert(out.end(), type, type + 4);
	if (size)
		out.insert(out.end(), data, data + size);
	const uLong crc =
		crc32(crc32(0, nullptr, 0), out.data() + typeAt, static_cast<uInt>(size + 4));
	putBigEndian(out, static_cast<uint32_t>(crc));
}

} // namespace

Sheet::Sheet(int width, int height, int64_t frames) : frames_(std::max<int64_t>(frames, 1))
{
	cells_ = static_cast<int>(std::min<int64_t>(frames_, kMaxCells));
	columns_ = std::min(cells_, kMaxColumns);
	rows_ = (cells_ + columns_ - 1) / columns_;
	thumbWidth_ = even(std::min(kMaxThumbWidth, width / 4));
	thumbHeight_ = even(
		static_cast<int>(static_cast<int64_t>(height) * thumbWidth_ / std::max(width, 1)));
	width_ = columns_ * thumbWidth_ + (columns_ + 1) * kGap;
	height_ = rows_ * thumbHeight_ + (rows_ + 1) * kGap;
	pixels_.resize(static_cast<size_t>(width_) * static_cast<size_t>(height_) * 4);
	for (size_t i = 0; i < pixels_.size(); i += 4)
		std::memcpy(&pixels_[i], kBackground, 4);
	filled_.assign(static_cast<size_t>(cells_), false);
}

int Sheet::cellOf(int64_t index) const noexcept
{
	// Cell c shows frame floor(c * frames / cells): the first frame, then evenly spaced.
	for (int cell = 0; cell < cells_; ++cell)
		if (static_cast<int64_t>(cell) * frames_ / cells_ == index)
			return cell;
	return -1;
}

Status Sheet::place(int cell, const uint8_t *rgba, int stride, int width, int height)
{
	if (cell < 0 || cell >= cells_ || !rgba || width <= 0 || height <= 0 || stride < width * 4)
		return Error(ErrorCode::InvalidArgument, "sheet",
			     _("a thumbnail does not fit the sheet"));
	const int x0 = kGap + (cell % columns_) * (thumbWidth_ + kGap);
	const int y0 = kGap + (cell / columns_) * (thumbHeight_ + kGap);
	std::lock_guard<std::mutex> lock(mutex_);
	for (int y = 0; y < thumbHeight_; ++y) {
		// The source rows and columns this output pixel covers (at least one of each).
		const int sy0 = y * height / thumbHeight_;
		const int sy1 = std::max(sy0 + 1, (y + 1) * height / thumbHeight_);
		uint8_t *row = &pixels_[(static_cast<size_t>(y0 + y) * static_cast<size_t>(width_) +
					 static_cast<size_t>(x0)) *
					4];
		for (int x = 0; x < thumbWidth_; ++x) {
			const int sx0 = x * width / thumbWidth_;
			const int sx1 = std::max(sx0 + 1, (x + 1) * width / thumbWidth_);
			uint32_t sum[4] = {};
			for (int sy = sy0; sy < sy1; ++sy) {
				const uint8_t *in = rgba + static_cast<size_t>(sy) *
								   static_cast<size_t>(stride);
				for (int sx = sx0; sx < sx1; ++sx)
					for (int c = 0; c < 4; ++c)
						sum[c] += in[sx * 4 + c];
			}
			const auto count = static_cast<uint32_t>((sy1 - sy0) * (sx1 - sx0));
			for (int c = 0; c < 3; ++c)
				row[x * 4 + c] = static_cast<uint8_t>(sum[c] / count);
			row[x * 4 + 3] = 255; // opaque whatever GL left in alpha
		}
	}
	filled_[static_cast<size_t>(cell)] = true;
	return {};
}

int Sheet::placed() const
{
	std::lock_guard<std::mutex> lock(mutex_);
	return static_cast<int>(std::count(filled_.begin(), filled_.end(), true));
}

Status Sheet::writePng(const std::string &path) const
{
	Result<std::vector<uint8_t>> png = Error(ErrorCode::Backend, "png", _("not encoded"));
	{
		std::lock_guard<std::mutex> lock(mutex_);
		png = encodePng(pixels_.data(), width_, height_, static_cast<size_t>(width_) * 4);
	}
	if (!png)
		return png.error();
	FILE *file = std::fopen(path.c_str(), "wb");
	const int openErrno = errno; // before _() and the formatting can touch it
	if (!file)
		return Error(ErrorCode::Backend, "output",
			     i18n::format(_("could not create '%s': %s"), path.c_str(),
					  std::strerror(openErrno)));
	const size_t written = std::fwrite(png->data(), 1, png->size(), file);
	const int writeErrno = errno;
	if (std::fclose(file) != 0 || written != png->size())
		return Error(ErrorCode::Backend, "output",
			     i18n::format(_("could not write '%s': %s"), path.c_str(),
					  std::strerror(writeErrno)));
	return {};
}

Result<std::vector<uint8_t>> encodePng(const uint8_t *rgba, int width, int height, size_t stride)
{
	const size_t rowBytes = static_cast<size_t>(width) * 4;
	// Each row: filter type 0 (None), then the pixels.
	std::vector<uint8_t> raw;
	raw.reserve((rowBytes + 1) * static_cast<size_t>(height));
	for (int y = 0; y < height; ++y) {
		raw.push_back(0);
		const uint8_t *row = rgba + static_cast<size_t>(y) * stride;
		raw.insert(raw.end(), row, row + rowBytes);
	}
	uLongf packedSize = compressBound(static_cast<uLong>(raw.size()));
	std::vector<uint8_t> packed(packedSize);
	const int err = compress2(packed.data(), &packedSize, raw.data(),
				  static_cast<uLong>(raw.size()), 6);
	if (err != Z_OK)
		return Error::format(ErrorCode::Backend, "png",
				     _("zlib could not compress the picture (%d)"), err);
	std::vector<uint8_t> out = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	std::vector<uint8_t> header;
	putBigEndian(header, static_cast<uint32_t>(width));
	putBigEndian(header, static_cast<uint32_t>(height));
	// 8 bits, RGBA, deflate, adaptive, no interlace.
	header.insert(header.end(), { 8, 6, 0, 0, 0 });
	putChunk(out, "IHDR", header.data(), header.size());
	putChunk(out, "IDAT", packed.data(), packedSize);
	putChunk(out, "IEND", nullptr, 0);
	return out;
}

} // namespace gpuhandle::demo
