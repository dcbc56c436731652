// The memory-type table of libgstgpuhandle-1.0: its rows, caps lookups, each role's features and
// adapters, and the adapters' conversions and errors on real buffers.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cpu_map.h>

#include <cstring>
#include <string>

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace {

GstCaps *capsWith(const char *feature)
{
	GstCaps *caps = gst_caps_from_string(
		"video/x-raw, format=NV12, width=64, height=48, framerate=30/1");
	gst_caps_set_features(caps, 0, gst_caps_features_new(feature, nullptr));
	return caps;
}

bool contains(const std::vector<const char *> &features, const char *feature)
{
	for (const char *f : features)
		if (std::strcmp(f, feature) == 0)
			return true;
	return false;
}

} // namespace

START_TEST(every_row_names_its_feature_and_is_found_by_it)
{
	const std::span<const MemoryTypeInfo> rows = memoryTypes();
	ck_assert_uint_eq(rows.size(), 6);
	ck_assert(rows.front().memory == BufferMemory::System);
	for (const MemoryTypeInfo &row : rows) {
		const std::string feature = "memory:" + std::string(row.name);
		ck_assert_str_eq(row.feature, feature.c_str());
		ck_assert_ptr_eq(memoryTypeInfo(row.memory), &row);
		GstCaps *caps = capsWith(row.feature);
		ck_assert_ptr_eq(&memoryTypeOfCaps(caps), &row);
		gst_caps_unref(caps);
		// A GpuCopy type says why; the others have no reason to give.
		ck_assert((row.outputCopy == OutputCopy::GpuCopy) == (row.copyReason != nullptr));
	}
	ck_assert_ptr_null(memoryTypeInfo(BufferMemory::GpuHandle));
	ck_assert_ptr_null(memoryTypeInfo(BufferMemory::Mixed));
	GstCaps *plain = gst_caps_from_string("video/x-raw, format=NV12");
	ck_assert(memoryTypeOfCaps(plain).memory == BufferMemory::System);
	gst_caps_unref(plain);
	// What this build found is what the rows say.
	ck_assert(memoryTypeInfo(BufferMemory::GlMemory)->built == (GPUHANDLE_GST_HAVE_GL != 0));
	ck_assert(memoryTypeInfo(BufferMemory::VulkanImage)->built ==
		  (GPUHANDLE_GST_HAVE_VULKAN != 0));
	ck_assert(memoryTypeInfo(BufferMemory::CudaMemory)->built ==
		  (GPUHANDLE_GST_HAVE_CUDA != 0));
	ck_assert(memoryTypeInfo(BufferMemory::VaMemory)->built == (GPUHANDLE_GST_HAVE_VA != 0));
}
END_TEST

START_TEST(each_role_offers_the_built_types_it_takes_in_its_order)
{
	for (MemoryRole role : { MemoryRole::Input, MemoryRole::Output }) {
		const std::vector<const char *> features = memoryFeatures(role);
		ck_assert_str_eq(features.front(), GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY);
		MemoryAdapters adapters(role);
		int lastRank = -1;
		for (const char *feature : features) {
			GstCaps *caps = capsWith(feature);
			const MemoryTypeInfo &row = memoryTypeOfCaps(caps);
			gst_caps_unref(caps);
			const int rank = role == MemoryRole::Input ? row.inputRank : row.outputRank;
			ck_assert_int_gt(rank, lastRank);
			lastRank = rank;
			ck_assert(row.built);
			MemoryAdapter *adapter = adapters.find(row.memory);
			ck_assert_ptr_nonnull(adapter);
			ck_assert_ptr_eq(&adapter->info(), &row);
			ck_assert(adapter->role() == role);
		}
		for (const MemoryTypeInfo &row : memoryTypes())
			if (!contains(features, row.feature))
				ck_assert_ptr_null(adapters.find(row.memory));
	}
	// GStreamer's VA elements allocate their own surfaces: VA is never an output.
	ck_assert(!contains(memoryFeatures(MemoryRole::Output), "memory:VAMemory"));
	ck_assert(contains(memoryFeatures(MemoryRole::Input), "memory:DMABuf"));
	ck_assert(contains(memoryFeatures(MemoryRole::Output), "memory:DMABuf"));
}
END_TEST

// System memory in, through the system adapter: a frame over the buffer's own bytes.
START_TEST(system_input_wraps_the_buffer)
{
	GstVideoInfo info;
	ck_assert(gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 64, 48));
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	gst_buffer_add_video_meta(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 64, 48);
	MemoryAdapters adapters(MemoryRole::Input);
	MemoryAdapter *system = adapters.find(BufferMemory::System);
	ck_assert_ptr_nonnull(system);
	DevicesSlot devices;
	InputBuffer in;
	in.buffer = buffer;
	in.info = &info;
	in.devices = &devices;
	BackendRef backend;
	Result<Frame> frame = system->frameFromBuffer(nullptr, in, backend);
	ck_assert_ok(frame);
	ck_assert(frame->format() == PixelFormat::NV12);
	ck_assert_uint_eq(frame->width(), 64);
	ck_assert_ptr_null(backend.get()); // system memory goes where the element chose
	GstMapInfo map;
	ck_assert(gst_buffer_map(buffer, &map, GST_MAP_READ));
	Result<CpuMapping> mapped = mapFrame(*frame, MapAccess::Read, kDefaultWaitTimeout);
	ck_assert_ok(mapped);
	ck_assert_ptr_eq(mapped->data(0), map.data); // the buffer's bytes, not a copy
	gst_buffer_unmap(buffer, &map);
	// Calls system memory does not have answer NotSupported, naming the type.
	Result<GstBuffer *> pooled = system->pooledBuffer(info);
	ck_assert(!pooled.ok());
	ck_assert(pooled.error().code() == ErrorCode::NotSupported);
	ck_assert(pooled.error().message().find("SystemMemory") != std::string::npos);
	gst_buffer_unref(buffer);
}
END_TEST

// A buffer that is not the adapter's memory is refused with WrongKind, naming both.
START_TEST(device_inputs_refuse_system_memory)
{
	GstVideoInfo info;
	ck_assert(gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 64, 48));
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	MemoryAdapters adapters(MemoryRole::Input);
	DevicesSlot devices;
	InputBuffer in;
	in.buffer = buffer;
	in.info = &info;
	in.devices = &devices;
	GstElement *element = gst_element_factory_make("fakesink", nullptr);
	gst_object_ref_sink(element);
	int tried = 0;
	for (BufferMemory memory :
	     { BufferMemory::DmaBuf, BufferMemory::GlMemory, BufferMemory::VulkanImage,
	       BufferMemory::CudaMemory, BufferMemory::VaMemory }) {
		MemoryAdapter *adapter = adapters.find(memory);
		if (!adapter)
			continue;
		BackendRef backend;
		Result<Frame> frame = adapter->frameFromBuffer(element, in, backend);
		ck_assert_msg(!frame.ok(), "%s took system memory", adapter->info().name);
		if (memory != BufferMemory::CudaMemory && memory != BufferMemory::VaMemory)
			ck_assert_msg(frame.error().code() == ErrorCode::WrongKind, "%s: %s",
				      adapter->info().name, frame.error().message().c_str());
		if (memory == BufferMemory::GlMemory || memory == BufferMemory::VulkanImage)
			ck_assert(frame.error().message().find(adapter->info().name) !=
				  std::string::npos);
		tried++;
	}
	ck_assert_int_ge(tried, 1);
	// Incomplete inputs are refused, not dereferenced.
	BackendRef backend;
	InputBuffer empty;
	Result<Frame> none =
		adapters.find(BufferMemory::DmaBuf)->frameFromBuffer(element, empty, backend);
	ck_assert(!none.ok() && none.error().code() == ErrorCode::NullHandle);
	none = adapters.find(BufferMemory::DmaBuf)->frameFromBuffer(nullptr, in, backend);
	ck_assert(!none.ok() && none.error().code() == ErrorCode::NullHandle);
	gst_object_unref(element);
	gst_buffer_unref(buffer);
}
END_TEST

// Output: DMA-BUF buffers over a frame whose resources are DMA-BUFs only; a memfd frame without
// an exporter is refused (WrongKind), not copied.
START_TEST(dmabuf_output_takes_only_fd_frames)
{
	MemoryAdapters adapters(MemoryRole::Output);
	MemoryAdapter *dmabuf = adapters.find(BufferMemory::DmaBuf);
	ck_assert_ptr_nonnull(dmabuf);
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	AllocateRequest request{};
	request.format = PixelFormat::NV12;
	request.width = 64;
	request.height = 48;
	Result<Frame> frame = (*cpu)->allocate(request);
	ck_assert_ok(frame);
	GstVideoInfo info;
	ck_assert(gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 64, 48));
	Result<GstBuffer *> out = dmabuf->bufferFromFrame(*frame, info, kDefaultWaitTimeout, {});
	ck_assert(!out.ok());
	ck_assert(out.error().code() == ErrorCode::WrongKind);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-memory-types");
	TCase *tc = tcase_create("gst-memory-types");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_row_names_its_feature_and_is_found_by_it);
	tcase_add_test(tc, each_role_offers_the_built_types_it_takes_in_its_order);
	tcase_add_test(tc, system_input_wraps_the_buffer);
	tcase_add_test(tc, device_inputs_refuse_system_memory);
	tcase_add_test(tc, dmabuf_output_takes_only_fd_frames);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
