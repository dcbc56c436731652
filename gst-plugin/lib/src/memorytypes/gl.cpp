// GLMemory in the memory-type table: GStreamer's textures to frames of the context's GL backend,
// frames of that context's share group back to GLMemory, and GStreamer's GL pool for the formats
// no route gives textures of. Built with gstreamer-gl-1.0.
#include "memorytypes_internal.h"

#include <mutex>

#include <gst/gpuhandle/gstgpuhandlegl.hpp>

namespace gpuhandle::gst::detail {

namespace {

class GlAdapter final : public MemoryAdapter
{
public:
	using MemoryAdapter::MemoryAdapter;
	~GlAdapter() override { release(); }

	// Only gpuhandledownload shares GL objects with neighbours: gpuhandleupload takes the
	// context each input memory names.
	bool answerContextQuery(GstElement *element, GstQuery *query) override
	{
		if (role() != MemoryRole::Output)
			return false;
		// Answered with references taken under the lock: set_context may replace the
		// objects meanwhile.
		GstGLDisplay *display = nullptr;
		GstGLContext *context = nullptr, *other = nullptr;
		{
			std::lock_guard<std::recursive_mutex> lock(mutex_);
			display = refOrNull(display_);
			context = refOrNull(context_);
			other = refOrNull(other_);
		}
		const bool answered =
			gst_gl_handle_context_query(element, query, display, context, other);
		gst_clear_object(&display);
		gst_clear_object(&context);
		gst_clear_object(&other);
		return answered;
	}

	void setContext(GstElement *element, GstContext *context) override
	{
		if (role() != MemoryRole::Output)
			return;
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		gst_gl_handle_set_context(element, context, &display_, &other_);
	}

	Result<Frame> frameFromBuffer(GstElement *, const InputBuffer &in,
				      BackendRef &backend) override
	{
		if (auto bad = incompleteInput(in))
			return *bad;
		GstMemory *mem = gst_buffer_peek_memory(in.buffer, 0);
		if (auto wrong = wrongMemory(info(), mem, gst_is_gl_memory(mem)))
			return *wrong;
		return frameOnDevice(
			glBackendFor(reinterpret_cast<GstGLBaseMemory *>(mem)->context), backend,
			[&] { return frameFromGlBuffer(in.buffer, *in.info); });
	}

	Result<BackendRef> openOutput(GstElement *element, DevicesSlot &) override
	{
		// Recursive: the neighbours' answers to the queries made under it come back into
		// this element (query, set_context) on the same thread, as in GstGLBaseFilter.
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		Status found = ensureGlContext(element, GST_PAD_SRC, &display_, &other_, &context_);
		if (!found.ok())
			return found.error();
		return glBackendFor(context_);
	}

	// The streaming thread alone replaces context_, so it reads it without the lock.
	Result<GstBuffer *> bufferFromFrame(const Frame &frame, const GstVideoInfo &info,
					    WaitDuration timeout, const BackendRef &) override
	{
		return glBufferFromFrame(frame, context_, info, timeout);
	}

	// GStreamer's GL pool: its buffers are written through their CPU map, and GStreamer
	// uploads them on unmap (packed 4:2:2 and v210 live in Vulkan buffers, which GL imports
	// as buffer objects, not the textures GStreamer's GL elements take).
	Result<GstBuffer *> pooledBuffer(const GstVideoInfo &info) override
	{
		if (!pool_) {
			GstCaps *caps = gst_video_info_to_caps(&info);
			gst_caps_set_features(caps, 0,
					      gst_caps_features_new("memory:GLMemory", nullptr));
			gst_caps_set_simple(caps, "texture-target", G_TYPE_STRING, "2D", nullptr);
			pool_ = gst_gl_buffer_pool_new(context_);
			GstStructure *config = gst_buffer_pool_get_config(pool_);
			gst_buffer_pool_config_set_params(
				config, caps, static_cast<guint>(GST_VIDEO_INFO_SIZE(&info)), 1, 0);
			gst_buffer_pool_config_add_option(config,
							  GST_BUFFER_POOL_OPTION_VIDEO_META);
			gst_caps_unref(caps);
			if (!gst_buffer_pool_set_config(pool_, config) ||
			    !gst_buffer_pool_set_active(pool_, TRUE)) {
				gst_clear_object(&pool_);
				return Error::format(
					ErrorCode::Backend, "pool",
					"GStreamer's GL pool did not start for %s.",
					gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)));
			}
		}
		GstBuffer *out = nullptr;
		if (GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool_, &out, nullptr);
		    ret != GST_FLOW_OK)
			return Error::format(ErrorCode::Backend, "pool",
					     "GStreamer's GL pool gave no buffer (%s).",
					     gst_flow_get_name(ret));
		return out;
	}

	void dropPools() override { dropPool(pool_); }

	void release() override
	{
		dropPools();
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		gst_clear_object(&context_);
		gst_clear_object(&other_);
		gst_clear_object(&display_);
	}

private:
	std::recursive_mutex mutex_{}; // guards the objects below against other threads' queries
	GstGLDisplay *display_ = nullptr;
	GstGLContext *other_ = nullptr;
	GstGLContext *context_ = nullptr;
	GstBufferPool *pool_ = nullptr; // the CPU-write fallback, made on first use
};

} // namespace

std::unique_ptr<MemoryAdapter> glAdapter(const MemoryTypeInfo &info, MemoryRole role)
{
	return std::make_unique<GlAdapter>(info, role);
}

} // namespace gpuhandle::gst::detail
