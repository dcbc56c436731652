// Benchmarks 2 and 4: a pipeline fed straight from a pad of ours (no source element, no
// streaming thread), so that pushing one buffer measures only what the elements cost.
#pragma once

#include <string>

#include <gst/gst.h>

namespace gpuhandle::bench::media {

// A pipeline whose element named "first" is fed by a source pad of ours.
struct Chain {
	GstElement *pipeline = nullptr;
	GstPad *src = nullptr;
	GstBufferPool *pool = nullptr; // allocate()'s, deactivated when the chain goes
	std::string error{};

	Chain(const std::string &description, GstCaps *caps)
	{
		GError *err = nullptr;
		pipeline = gst_parse_launch(description.c_str(), &err);
		if (!pipeline) {
			error = err ? err->message : "gst_parse_launch failed";
			g_clear_error(&err);
			return;
		}
		GstElement *first = gst_bin_get_by_name(GST_BIN(pipeline), "first");
		GstPad *sink = first ? gst_element_get_static_pad(first, "sink") : nullptr;
		src = gst_pad_new("benchsrc", GST_PAD_SRC);
		if (!sink || gst_pad_link(src, sink) != GST_PAD_LINK_OK)
			error = "could not link to the chain's first element";
		if (sink)
			gst_object_unref(sink);
		if (first)
			gst_object_unref(first);
		if (!error.empty())
			return;
		gst_pad_set_active(src, TRUE);
		if (gst_element_set_state(pipeline, GST_STATE_PLAYING) ==
		    GST_STATE_CHANGE_FAILURE) {
			error = "the pipeline did not start";
			return;
		}
		GstSegment segment;
		gst_segment_init(&segment, GST_FORMAT_TIME);
		gst_pad_push_event(src, gst_event_new_stream_start("bench"));
		gst_pad_push_event(src, gst_event_new_caps(caps));
		gst_pad_push_event(src, gst_event_new_segment(&segment));
	}
	~Chain()
	{
		if (pipeline)
			gst_element_set_state(pipeline, GST_STATE_NULL);
		if (pool) {
			gst_buffer_pool_set_active(pool, FALSE);
			gst_object_unref(pool);
		}
		if (src) {
			gst_pad_set_active(src, FALSE);
			gst_object_unref(src);
		}
		if (pipeline)
			gst_object_unref(pipeline);
	}
	Chain(const Chain &) = delete;
	Chain &operator=(const Chain &) = delete;

	// A buffer of `caps` (`size` bytes) from the pool the first element proposes, as a source
	// element would write into (GPU-visible memory for vulkanupload), else system memory; its
	// bytes are filled with `fill`. Once per chain; unref it before the chain goes.
	GstBuffer *allocate(GstCaps *caps, gsize size, guint8 fill)
	{
		GstBuffer *buffer = nullptr;
		GstQuery *query = gst_query_new_allocation(caps, TRUE);
		if (gst_pad_peer_query(src, query) && gst_query_get_n_allocation_pools(query) > 0)
			gst_query_parse_nth_allocation_pool(query, 0, &pool, nullptr, nullptr,
							    nullptr);
		gst_query_unref(query);
		if (pool && (!gst_buffer_pool_set_active(pool, TRUE) ||
			     gst_buffer_pool_acquire_buffer(pool, &buffer, nullptr) != GST_FLOW_OK))
			buffer = nullptr;
		if (!buffer)
			buffer = gst_buffer_new_allocate(nullptr, size, nullptr);
		gst_buffer_memset(buffer, 0, fill, size);
		return buffer;
	}

	// Pushes `buffer` n times; false (with error set) when a push fails.
	bool push(GstBuffer *buffer, int n)
	{
		for (int i = 0; i < n; i++) {
			const GstFlowReturn ret = gst_pad_push(src, gst_buffer_ref(buffer));
			if (ret != GST_FLOW_OK) {
				error = std::string("push: ") + gst_flow_get_name(ret);
				return false;
			}
		}
		return true;
	}
};

} // namespace gpuhandle::bench::media
