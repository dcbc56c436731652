// Stopping a test's pipeline and waiting, bounded, until GStreamer has really let it go.
#pragma once

#include <gst/gst.h>

namespace gpuhandle::test {

namespace detail {
struct PipelineGone {
	GMutex mutex;
	GCond cond;
	bool gone = false;
};

inline void pipelineGone(gpointer data, GObject *)
{
	auto *state = static_cast<PipelineGone *>(data);
	g_mutex_lock(&state->mutex);
	state->gone = true;
	g_cond_signal(&state->cond);
	g_mutex_unlock(&state->mutex);
}
} // namespace detail

// Sets `pipeline` to NULL, drops the caller's reference and returns once the pipeline has been
// disposed, its elements with it (false after 10 s). GStreamer may hold the last reference on a
// thread of its own (a bin's state-change continuation runs on gst_element_call_async's pool
// with a reference), and the elements are then released there: a Vulkan element holding the
// last reference of a GstVulkanInstance destroys it on that thread, and vkDestroyInstance
// dlclose()s the driver while the test process, done, runs its exit handlers (a SIGSEGV at the
// end of test_gst_vulkan, 1 run in 80 with two at once). Waiting here keeps every release on
// the test's own timeline.
inline bool releasePipeline(GstElement *pipeline)
{
	gst_element_set_state(pipeline, GST_STATE_NULL);
	auto *state = new detail::PipelineGone();
	g_mutex_init(&state->mutex);
	g_cond_init(&state->cond);
	g_object_weak_ref(G_OBJECT(pipeline), detail::pipelineGone, state);
	gst_object_unref(pipeline);
	const gint64 deadline = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
	g_mutex_lock(&state->mutex);
	while (!state->gone)
		if (!g_cond_wait_until(&state->cond, &state->mutex, deadline))
			break;
	const bool gone = state->gone;
	g_mutex_unlock(&state->mutex);
	if (!gone)
		return false; // the notification may still come: `state` stays, leaked on purpose
	g_mutex_clear(&state->mutex);
	g_cond_clear(&state->cond);
	delete state;
	return true;
}

} // namespace gpuhandle::test
