// gpuhandle-demo's contact sheet: thumbnails of chosen frames in a grid, written as a PNG.
#pragma once

#include <gpuhandle/result.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace gpuhandle::demo {

// Up to 12 cells (4 columns, 3 rows) of thumbnails of frames spread evenly over the clip, 4
// pixels apart on a dark background. Thread-safe: frames arrive on GStreamer's streaming thread.
class Sheet
{
public:
	static constexpr int kMaxColumns = 4;
	static constexpr int kMaxCells = 12;
	static constexpr int kGap = 4;
	static constexpr int kMaxThumbWidth = 320;

	// A sheet for `frames` frames of `width` x `height` (frames >= 1).
	Sheet(int width, int height, int64_t frames);

	int thumbWidth() const noexcept { return thumbWidth_; }
	int thumbHeight() const noexcept { return thumbHeight_; }
	int width() const noexcept { return width_; }
	int height() const noexcept { return height_; }
	int columns() const noexcept { return columns_; }
	int rows() const noexcept { return rows_; }
	int cells() const noexcept { return cells_; }

	// The cell frame `index` (counted from 0) fills, or -1 when it is not on the sheet.
	int cellOf(int64_t index) const noexcept;
	// Scales (box filter) an RGBA picture into cell `cell`. Errors: InvalidArgument.
	Status place(int cell, const uint8_t *rgba, int stride, int width, int height);
	// How many cells have a picture.
	int placed() const;
	// Errors: Backend (the file could not be written, with the system's reason).
	Status writePng(const std::string &path) const;

private:
	int columns_ = 1;
	int rows_ = 1;
	int cells_ = 1;
	int64_t frames_ = 1;
	int thumbWidth_ = 2;
	int thumbHeight_ = 2;
	int width_ = 0;
	int height_ = 0;
	mutable std::mutex mutex_;
	std::vector<uint8_t> pixels_; // RGBA, width_ * 4 bytes a row
	std::vector<bool> filled_;
};

// PNG bytes (8-bit RGBA, no interlace) of `width` x `height` pixels, `stride` bytes a row.
// Errors: Backend (zlib failed).
Result<std::vector<uint8_t>> encodePng(const uint8_t *rgba, int width, int height, size_t stride);

} // namespace gpuhandle::demo
