// GstGpuHandleSyncMeta: add/get, bounded waits, polling, the release gate, copies.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/release_gate.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::shared_ptr<CpuFence> newFence()
{
	Result<std::shared_ptr<CpuFence>> fence = CpuFence::create();
	ck_assert_ok(fence);
	return *fence;
}

ReleaseGate newGate()
{
	Result<ReleaseGate> gate = ReleaseGate::create();
	ck_assert_ok(gate);
	return *gate;
}

guint syncMetaCount(GstBuffer *buffer)
{
	return gst_buffer_get_n_meta(buffer, GST_GPU_HANDLE_SYNC_META_API_TYPE);
}

long long millisSince(Clock::time_point start)
{
	return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

} // namespace

// The API has no tags, the info is registered once, and the meta is found where it was added.
START_TEST(meta_is_added_and_found)
{
	const int fdsBefore = test::openFdCount();
	{
		const GstMetaInfo *info = gst_gpu_handle_sync_meta_get_info();
		ck_assert_ptr_nonnull(info);
		ck_assert_ptr_eq(info, gst_gpu_handle_sync_meta_get_info());
		ck_assert(info->api == GST_GPU_HANDLE_SYNC_META_API_TYPE);
		const gchar *const *tags =
			gst_meta_api_type_get_tags(GST_GPU_HANDLE_SYNC_META_API_TYPE);
		ck_assert(tags == nullptr || tags[0] == nullptr);
		ck_assert(!gst_meta_api_type_has_tag(GST_GPU_HANDLE_SYNC_META_API_TYPE,
						     g_quark_from_static_string("video")));

		GstBuffer *buffer = gst_buffer_new_allocate(nullptr, 64, nullptr);
		ck_assert_ptr_null(gst_buffer_get_gpu_handle_sync_meta(buffer));
		ck_assert_ptr_null(gst_buffer_get_gpu_handle_sync_meta(nullptr));
		std::shared_ptr<CpuFence> fence = newFence();
		ReleaseGate gate = newGate();
		GstGpuHandleSyncMeta *meta = gst::addSyncMeta(buffer, fence->point(), gate);
		ck_assert_ptr_nonnull(meta);
		ck_assert_ptr_eq(gst_buffer_get_gpu_handle_sync_meta(buffer), meta);
		ck_assert(meta->meta.info == info);
		ck_assert(gst::syncMetaAcquire(meta).kind() == SyncKind::Cpu);
		ck_assert(gst::syncMetaAcquire(meta).waiter() == fence);
		ck_assert(!gst::syncMetaRelease(meta).isNone());
		ck_assert(gst::syncMetaAcquire(nullptr).isNoop());
		ck_assert(gst::syncMetaRelease(nullptr).isNone());

		// Adding again replaces the state: still one meta, the old gate signalled (nobody
		// else shared it), the new acquire point in place.
		ReleaseGate second = newGate();
		ck_assert_ptr_eq(gst::addSyncMeta(buffer, SyncPoint::noop(), second), meta);
		ck_assert_uint_eq(syncMetaCount(buffer), 1);
		ck_assert(gate.isSignaled());
		ck_assert(!second.isSignaled());
		ck_assert(gst::syncMetaAcquire(meta).isNoop());

		// A shared buffer is not writable: no meta, no critical.
		gst_buffer_ref(buffer);
		ck_assert_ptr_null(gst::addSyncMeta(buffer, fence->point()));
		gst_buffer_unref(buffer);
		ck_assert_ptr_null(gst::addSyncMeta(nullptr, fence->point()));
		gst_buffer_unref(buffer);
		ck_assert(second.isSignaled());
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A CpuFence signalled late from another thread: the wait blocks until then and succeeds.
START_TEST(wait_blocks_until_signalled)
{
	const int fdsBefore = test::openFdCount();
	{
		GstBuffer *buffer = gst_buffer_new();
		std::shared_ptr<CpuFence> fence = newFence();
		GstGpuHandleSyncMeta *meta = gst::addSyncMeta(buffer, fence->point());
		ck_assert_ptr_nonnull(meta);
		ck_assert(!gst_gpu_handle_sync_meta_is_signaled(meta));
		const Clock::time_point start = Clock::now();
		std::thread signaller([fence] {
			std::this_thread::sleep_for(150ms);
			fence->signal();
		});
		GError *error = nullptr;
		const gboolean waited = gst_gpu_handle_sync_meta_wait(meta, 5 * GST_SECOND, &error);
		const long long elapsed = millisSince(start);
		signaller.join();
		ck_assert_msg(waited, "the wait failed: %s", error ? error->message : "");
		ck_assert_ptr_null(error);
		// Blocked until the signal (150 ms after start), woken by it (not the 5 s timeout).
		ck_assert_int_ge(elapsed, 100);
		ck_assert(gst_gpu_handle_sync_meta_is_signaled(meta));
		ck_assert_ok(gst::waitBufferAcquire(buffer, 1ms));
		// GST_CLOCK_TIME_NONE means the default bound, not forever; signalled, it returns.
		ck_assert(gst_gpu_handle_sync_meta_wait(meta, GST_CLOCK_TIME_NONE, nullptr));
		gst_buffer_unref(buffer);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Never signalled: the wait gives up after its timeout with GST_RESOURCE_ERROR_BUSY.
START_TEST(wait_times_out_with_busy)
{
	const int fdsBefore = test::openFdCount();
	{
		GstBuffer *buffer = gst_buffer_new();
		std::shared_ptr<CpuFence> fence = newFence();
		GstGpuHandleSyncMeta *meta = gst::addSyncMeta(buffer, fence->point());
		GError *error = nullptr;
		const Clock::time_point start = Clock::now();
		ck_assert(!gst_gpu_handle_sync_meta_wait(meta, 80 * GST_MSECOND, &error));
		const long long elapsed = millisSince(start);
		ck_assert_int_ge(elapsed, 70);
		ck_assert_ptr_nonnull(error);
		ck_assert(error->domain == GST_RESOURCE_ERROR);
		ck_assert_int_eq(error->code, GST_RESOURCE_ERROR_BUSY);
		ck_assert(error->message && error->message[0]);
		g_error_free(error);
		// Without a GError to fill the answer is the same.
		ck_assert(!gst_gpu_handle_sync_meta_wait(meta, 10 * GST_MSECOND, nullptr));
		ck_assert_error(gst::waitBufferAcquire(buffer, 20ms), ErrorCode::Timeout,
				"timeout");
		ck_assert(!gst_gpu_handle_sync_meta_is_signaled(meta));
		gst_buffer_unref(buffer);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A point that cannot be waited on (a raw carrier) fails with GST_RESOURCE_ERROR_FAILED; a
// Noop point and a buffer without the meta return at once.
START_TEST(wait_failures_and_noop_points)
{
	GstBuffer *buffer = gst_buffer_new();
	// A Vulkan semaphore's fields without the waiter that owns it: nothing can wait on the CPU.
	Result<SyncPoint> raw = SyncPoint::create(
		VulkanSemaphoreSync{ 1, VulkanSemaphoreKind::Timeline, 3, test::fakeHandle(0x10) },
		nullptr);
	ck_assert_ok(raw);
	GstGpuHandleSyncMeta *meta = gst::addSyncMeta(buffer, *raw);
	GError *error = nullptr;
	ck_assert(!gst_gpu_handle_sync_meta_wait(meta, GST_SECOND, &error));
	ck_assert_ptr_nonnull(error);
	ck_assert(error->domain == GST_RESOURCE_ERROR);
	ck_assert_int_eq(error->code, GST_RESOURCE_ERROR_FAILED);
	g_error_free(error);
	ck_assert(!gst_gpu_handle_sync_meta_is_signaled(meta));
	ck_assert_error(gst::waitBufferAcquire(buffer, 10ms), ErrorCode::NotSupported, "waiter");

	gst::addSyncMeta(buffer, SyncPoint::noop());
	ck_assert(gst_gpu_handle_sync_meta_wait(meta, 0, nullptr));
	ck_assert(gst_gpu_handle_sync_meta_is_signaled(meta));
	gst_buffer_unref(buffer);

	GstBuffer *plain = gst_buffer_new();
	ck_assert_ok(gst::waitBufferAcquire(plain, 0ms));
	gst_buffer_unref(plain);
	ck_assert_error(gst::waitBufferAcquire(nullptr), ErrorCode::NullHandle, "buffer");
	ck_assert(!gst_gpu_handle_sync_meta_wait(nullptr, 0, nullptr));
}
END_TEST

// gst_buffer_copy() shares the state: both wait on one point, and the gate is signalled once
// the last of them is freed; a deep copy (new system memory) does not.
START_TEST(release_gate_signals_on_last_free_across_copies)
{
	const int fdsBefore = test::openFdCount();
	{
		std::shared_ptr<CpuFence> fence = newFence();
		ReleaseGate gate = newGate();
		GstBuffer *buffer = gst_buffer_new_allocate(nullptr, 16, nullptr);
		gst::addSyncMeta(buffer, fence->point(), gate);
		GstBuffer *copy = gst_buffer_copy(buffer);
		GstGpuHandleSyncMeta *copied = gst_buffer_get_gpu_handle_sync_meta(copy);
		ck_assert_ptr_nonnull(copied);
		ck_assert_ptr_ne(copied, gst_buffer_get_gpu_handle_sync_meta(buffer));
		ck_assert(gst::syncMetaAcquire(copied).waiter() == fence);
		// A deep copy of system memory has bytes of its own: it holds nothing of the
		// producer's, so it neither waits nor keeps the gate (as videoconvert's output).
		GstBuffer *deep = gst_buffer_copy_deep(buffer);
		ck_assert_ptr_null(gst_buffer_get_gpu_handle_sync_meta(deep));
		fence->signal();
		ck_assert(gst_gpu_handle_sync_meta_is_signaled(copied));

		gst_buffer_unref(buffer);
		ck_assert(!gate.isSignaled());
		ck_assert(!gate.released().isSignaled().value());
		gst_buffer_unref(copy);
		ck_assert(gate.isSignaled());
		ck_assert_ok(gate.released().wait(1s));
		gst_buffer_unref(deep);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// The consumer may release before the buffer goes; later releases and the free add nothing.
START_TEST(explicit_release_signals_the_gate)
{
	const int fdsBefore = test::openFdCount();
	{
		ReleaseGate gate = newGate();
		GstBuffer *buffer = gst_buffer_new();
		GstGpuHandleSyncMeta *meta = gst::addSyncMeta(buffer, SyncPoint::noop(), gate);
		GstBuffer *copy = gst_buffer_copy(buffer);
		ck_assert(!gate.isSignaled());
		gst_gpu_handle_sync_meta_release(gst_buffer_get_gpu_handle_sync_meta(copy));
		ck_assert(gate.isSignaled());
		gst_gpu_handle_sync_meta_release(meta);
		gst_buffer_unref(copy);
		gst_buffer_unref(buffer);
		ck_assert(gate.isSignaled());
		ck_assert(gate.released().isSignaled().value());

		// A meta without a gate ignores the call, as does a null meta.
		GstBuffer *gateless = gst_buffer_new();
		GstGpuHandleSyncMeta *none = gst::addSyncMeta(gateless, SyncPoint::noop());
		ck_assert(gst::syncMetaRelease(none).isNone());
		gst_gpu_handle_sync_meta_release(none);
		gst_gpu_handle_sync_meta_release(nullptr);
		gst_buffer_unref(gateless);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// gst_buffer_make_writable() copies a shared buffer: the copy keeps the meta's state. Other
// transforms (new memory: a scale) drop the meta.
START_TEST(meta_survives_make_writable)
{
	std::shared_ptr<CpuFence> fence = newFence();
	ReleaseGate gate = newGate();
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, 16, nullptr);
	gst::addSyncMeta(buffer, fence->point(), gate);
	GstBuffer *shared = gst_buffer_ref(buffer);
	GstBuffer *writable = gst_buffer_make_writable(shared);
	ck_assert_ptr_ne(writable, buffer);
	GstGpuHandleSyncMeta *meta = gst_buffer_get_gpu_handle_sync_meta(writable);
	ck_assert_ptr_nonnull(meta);
	ck_assert(gst::syncMetaAcquire(meta).waiter() == fence);
	ck_assert(!gst_gpu_handle_sync_meta_is_signaled(meta));
	gst_buffer_unref(buffer);
	ck_assert(!gate.isSignaled());

	const GstMetaInfo *info = gst_gpu_handle_sync_meta_get_info();
	GstBuffer *scaled = gst_buffer_new();
	ck_assert(!info->transform_func(scaled, &meta->meta, writable,
					g_quark_from_static_string("gst-video-scale"), nullptr));
	ck_assert_ptr_null(gst_buffer_get_gpu_handle_sync_meta(scaled));
	gst_buffer_unref(scaled);
	gst_buffer_unref(writable);
	ck_assert(gate.isSignaled());
}
END_TEST

// GstBaseTransform copies untagged metas onto its output with the copy transform: out of CPU
// memory (system memory, memfds) into memory of the output's own, the meta stays behind, and the
// gate goes with the input buffer; out of a DMA-BUF (a GPU may still read what it was imported
// as), the output keeps the state.
START_TEST(a_copy_into_new_memory_keeps_the_state_only_out_of_gpu_readable_memory)
{
	const int fdsBefore = test::openFdCount();
	const GstMetaInfo *info = gst_gpu_handle_sync_meta_get_info();
	for (const bool dmaBuf : { false, true }) {
		ReleaseGate gate = newGate();
		GstAllocator *allocator = dmaBuf ? gst_dmabuf_allocator_new()
						 : gst_fd_allocator_new();
		UniqueFd fd = test::makeMemfd(4096, true);
		GstBuffer *buffer = gst_buffer_new();
		gst_buffer_append_memory(buffer,
					 gst_fd_allocator_alloc(allocator, fd.release(), 4096,
								GST_FD_MEMORY_FLAG_NONE));
		gst_object_unref(allocator);
		GstGpuHandleSyncMeta *meta = gst::addSyncMeta(buffer, SyncPoint::noop(), gate);
		GstBuffer *converted = gst_buffer_new_allocate(nullptr, 4096, nullptr);
		GstMetaTransformCopy region = { FALSE, 0, static_cast<gsize>(-1) };
		ck_assert(info->transform_func(converted, &meta->meta, buffer,
					       g_quark_from_static_string("gst-copy"), &region));
		ck_assert(dmaBuf == (gst_buffer_get_gpu_handle_sync_meta(converted) != nullptr));
		gst_buffer_unref(buffer);
		ck_assert(gate.isSignaled() == !dmaBuf);
		gst_buffer_unref(converted);
		ck_assert(gate.isSignaled());
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *suite = suite_create("gst-syncmeta");
	TCase *tc = tcase_create("gst-syncmeta");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, meta_is_added_and_found);
	tcase_add_test(tc, wait_blocks_until_signalled);
	tcase_add_test(tc, wait_times_out_with_busy);
	tcase_add_test(tc, wait_failures_and_noop_points);
	tcase_add_test(tc, release_gate_signals_on_last_free_across_copies);
	tcase_add_test(tc, explicit_release_signals_the_gate);
	tcase_add_test(tc, meta_survives_make_writable);
	tcase_add_test(tc, a_copy_into_new_memory_keeps_the_state_only_out_of_gpu_readable_memory);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
