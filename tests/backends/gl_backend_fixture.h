// Test fixture: the OpenGL backend tests' helpers (open, allocate, formats; the byte pattern is
// frame_pattern.h's).
#pragma once

#include <gpuhandle/backends/backend.h>

#include <cstdint>

// Last: Check defines a fail() macro that breaks standard headers included after it.
// clang-format off
#include "frame_pattern.h"
#include "check_helpers.h"
// clang-format on

namespace gpuhandle::test {

inline BackendRef openGl()
{
	auto opened = openBackend(BackendKind::OpenGL);
	ck_assert_ok(opened);
	return *opened;
}

inline Frame allocate(Backend &backend, PixelFormat format, uint32_t width, uint32_t height,
		      FrameStorage storage)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	request.storage = storage;
	auto frame = backend.allocate(request);
	ck_assert_ok(frame);
	return *frame;
}

inline constexpr PixelFormat kFormats[] = { PixelFormat::NV12,   PixelFormat::YUV420P,
					    PixelFormat::P010LE, PixelFormat::RGBA,
					    PixelFormat::V210,   PixelFormat::BGRA };

} // namespace gpuhandle::test
