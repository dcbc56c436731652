// Host memory imported into OpenCL on PoCL: readback equals the host bytes, OpenCL writes land in
// the host memory, the cl_mem and the bytes' anchor are released once; bad input is refused.
#define CL_TARGET_OPENCL_VERSION 120
#include <gpuhandle/backends/opencl_memory.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <CL/cl.h>

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "check_helpers.h"
#include "opencl_context.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;

namespace {

// Each test runs in a forked child (Check's default) and opens its own context there.
cl_context g_context = nullptr;
cl_device_id g_device = nullptr;
cl_command_queue g_queue = nullptr;

void setUp()
{
	std::string why;
	g_context = test::openClContext(why, &g_device);
	ck_assert_msg(g_context, "%s", why.c_str());
	cl_int error = CL_SUCCESS;
	g_queue = clCreateCommandQueue(g_context, g_device, 0, &error);
	ck_assert_int_eq(error, CL_SUCCESS);
}

void tearDown()
{
	if (g_queue)
		clReleaseCommandQueue(g_queue);
	if (g_context)
		clReleaseContext(g_context);
	g_queue = nullptr;
	g_context = nullptr;
}

// An odd size, so that nothing rounds to a page or a vector width by luck.
constexpr size_t kSize = 4099;

uint8_t patternAt(size_t i)
{
	return static_cast<uint8_t>((i * 7 + 3) ^ (i >> 8));
}

// 64-byte aligned host memory (what PoCL wants for zero-copy) freed by the bytes' anchor, which
// counts its releases.
struct HostBlock {
	void *data = nullptr;
	std::atomic<int> released{ 0 };
};

void releaseBlock(void *data)
{
	auto *block = static_cast<HostBlock *>(data);
	block->released.fetch_add(1);
}

CpuBytes bytesOf(HostBlock &block)
{
	return CpuBytes::create({ block.data, kSize, makeKeepAlive(releaseBlock, &block) }).value();
}

cl_mem memOf(const Resource &resource)
{
	return static_cast<cl_mem>(resource.get<OpenClMem>()->desc().mem);
}

} // namespace

START_TEST(host_bytes_read_back_and_opencl_writes_land_in_host_memory)
{
	HostBlock block;
	block.data = std::aligned_alloc(64, 4160);
	auto *host = static_cast<uint8_t *>(block.data);
	for (size_t i = 0; i < kSize; ++i)
		host[i] = patternAt(i);
	cl_mem mem = nullptr;
	{
		auto imported = importHostMemoryIntoOpenCl(bytesOf(block), g_context, g_queue,
							   MapAccess::ReadWrite);
		ck_assert_ok(imported);
		const OpenClMem *handle = imported->get<OpenClMem>();
		ck_assert_ptr_nonnull(handle);
		ck_assert_uint_eq(handle->desc().size, kSize);
		ck_assert_ptr_eq(handle->desc().queue, g_queue);
		mem = memOf(*imported);

		// The buffer uses the host memory: CL_MEM_HOST_PTR names it.
		void *hostPtr = nullptr;
		ck_assert_int_eq(clGetMemObjectInfo(mem, CL_MEM_HOST_PTR, sizeof(hostPtr), &hostPtr,
						    nullptr),
				 CL_SUCCESS);
		ck_assert_ptr_eq(hostPtr, block.data);

		std::vector<uint8_t> readBack(kSize, 0);
		ck_assert_int_eq(clEnqueueReadBuffer(g_queue, mem, CL_TRUE, 0, kSize,
						     readBack.data(), 0, nullptr, nullptr),
				 CL_SUCCESS);
		for (size_t i = 0; i < kSize; ++i)
			ck_assert_msg(readBack[i] == patternAt(i),
				      "byte %zu: read 0x%x, wrote 0x%x", i, readBack[i],
				      patternAt(i));

		// OpenCL writes: a fill and a partial write; the host sees them once it maps the
		// buffer (the spec's guarantee for USE_HOST_PTR; PoCL writes the host memory
		// itself).
		const uint8_t fill = 0xA5;
		ck_assert_int_eq(clEnqueueFillBuffer(g_queue, mem, &fill, 1, 0, 2048, 0, nullptr,
						     nullptr),
				 CL_SUCCESS);
		std::vector<uint8_t> tail(kSize - 3000);
		for (size_t i = 0; i < tail.size(); ++i)
			tail[i] = static_cast<uint8_t>(255 - patternAt(i));
		ck_assert_int_eq(clEnqueueWriteBuffer(g_queue, mem, CL_FALSE, 3000, tail.size(),
						      tail.data(), 0, nullptr, nullptr),
				 CL_SUCCESS);
		ck_assert_int_eq(clFinish(g_queue), CL_SUCCESS);
		cl_int error = CL_SUCCESS;
		void *mapped = clEnqueueMapBuffer(g_queue, mem, CL_TRUE, CL_MAP_READ, 0, kSize, 0,
						  nullptr, nullptr, &error);
		ck_assert_int_eq(error, CL_SUCCESS);
		// USE_HOST_PTR maps to the host pointer itself.
		ck_assert_ptr_eq(mapped, block.data);
		for (size_t i = 0; i < kSize; ++i) {
			uint8_t expected = i < 2048    ? fill
					   : i >= 3000 ? tail[i - 3000]
						       : patternAt(i);
			ck_assert_msg(host[i] == expected, "host byte %zu: 0x%x, expected 0x%x", i,
				      host[i], expected);
		}
		ck_assert_int_eq(clEnqueueUnmapMemObject(g_queue, mem, mapped, 0, nullptr, nullptr),
				 CL_SUCCESS);
		ck_assert_int_eq(clFinish(g_queue), CL_SUCCESS);

		// Copies share the one cl_mem reference held by the anchor.
		Resource copy = *imported;
		cl_uint references = 0;
		ck_assert_int_eq(clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof(references),
						    &references, nullptr),
				 CL_SUCCESS);
		ck_assert_uint_eq(references, 1);
		ck_assert_int_eq(block.released.load(), 0);
		// Keep mem alive past the last copy to see that it is released once, not twice.
		ck_assert_int_eq(clRetainMemObject(mem), CL_SUCCESS);
	}
	ck_assert_int_eq(block.released.load(), 1);
	cl_uint references = 0;
	ck_assert_int_eq(clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof(references),
					    &references, nullptr),
			 CL_SUCCESS);
	ck_assert_uint_eq(references, 1); // only the test's own reference is left
	ck_assert_int_eq(clReleaseMemObject(mem), CL_SUCCESS);
	std::free(block.data);
}
END_TEST

START_TEST(access_flags_follow_map_access)
{
	HostBlock block;
	block.data = std::aligned_alloc(64, 4160);
	for (auto [access, flag] : { std::pair{ MapAccess::Read, CL_MEM_READ_ONLY },
				     std::pair{ MapAccess::Write, CL_MEM_WRITE_ONLY },
				     std::pair{ MapAccess::ReadWrite, CL_MEM_READ_WRITE } }) {
		auto imported =
			importHostMemoryIntoOpenCl(bytesOf(block), g_context, g_queue, access);
		ck_assert_ok(imported);
		cl_mem_flags flags = 0;
		ck_assert_int_eq(clGetMemObjectInfo(memOf(*imported), CL_MEM_FLAGS, sizeof(flags),
						    &flags, nullptr),
				 CL_SUCCESS);
		ck_assert_uint_eq(flags, flag | CL_MEM_USE_HOST_PTR);
	}
	ck_assert_int_eq(block.released.load(), 3);
	std::free(block.data);
}
END_TEST

START_TEST(invalid_input_is_refused_and_nothing_is_kept)
{
	HostBlock block;
	block.data = std::aligned_alloc(64, 4160);
	{
		CpuBytes bytes = bytesOf(block);
		ck_assert_error(importHostMemoryIntoOpenCl(bytes, nullptr, g_queue,
							   MapAccess::Read),
				ErrorCode::NullHandle, "clContext");
		ck_assert_error(importHostMemoryIntoOpenCl(bytes, g_context, nullptr,
							   MapAccess::Read),
				ErrorCode::NullHandle, "clQueue");
		ck_assert_error(importHostMemoryIntoOpenCl(bytes, g_context, g_queue,
							   static_cast<MapAccess>(0)),
				ErrorCode::InvalidArgument, "access");
		// A queue of another context is refused.
		std::string why;
		cl_device_id device = nullptr;
		cl_context other = test::openClContext(why, &device);
		ck_assert_msg(other, "%s", why.c_str());
		cl_int error = CL_SUCCESS;
		cl_command_queue otherQueue = clCreateCommandQueue(other, device, 0, &error);
		ck_assert_int_eq(error, CL_SUCCESS);
		ck_assert_error(importHostMemoryIntoOpenCl(bytes, g_context, otherQueue,
							   MapAccess::Read),
				ErrorCode::InvalidArgument, "clQueue");
		clReleaseCommandQueue(otherQueue);
		clReleaseContext(other);
	}
	ck_assert_int_eq(block.released.load(), 1); // only the test's CpuBytes held it
	std::free(block.data);
}
END_TEST

int main()
{
	// Skips (exit 77) when no OpenCL platform opens.
	int probed = test::probeInChild([] {
		std::string why;
		if (cl_context context = test::openClContext(why))
			clReleaseContext(context);
		return why;
	});
	if (probed != 0)
		return probed;
	Suite *s = suite_create("opencl-memory");
	TCase *tc = tcase_create("opencl-memory");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setUp, tearDown);
	tcase_add_test(tc, host_bytes_read_back_and_opencl_writes_land_in_host_memory);
	tcase_add_test(tc, access_flags_follow_map_access);
	tcase_add_test(tc, invalid_input_is_refused_and_nothing_is_kept);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
