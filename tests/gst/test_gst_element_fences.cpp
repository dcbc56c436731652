// gpuhandledownload and a frame's fence in real pipelines: a late fence makes the consumer wait,
// one that never signals is an element error, a flush or state change ends the wait.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/cpu_fence.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "elements_fixture.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::appendFrame;
using gpuhandle::test::Run;
using gpuhandle::test::Size;
using namespace gpuhandle::test::elements;

namespace {

// An appsrc pipeline feeding GpuHandle buffers made here to gpuhandledownload.
struct FedPipeline {
	GstElement *pipeline = nullptr;
	GstElement *src = nullptr;
	GstElement *sink = nullptr;
	explicit FedPipeline(const std::string &caps, const std::string &downloadProps = "")
	{
		const std::string description = "appsrc name=src format=time caps=\"" + caps +
						"\" ! gpuhandledownload name=down " +
						downloadProps + " ! " + kSink;
		GError *error = nullptr;
		pipeline = gst_parse_launch(description.c_str(), &error);
		ck_assert_msg(pipeline && !error, "%s", error ? error->message : "?");
		src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
		sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
		gst_element_set_state(pipeline, GST_STATE_PLAYING);
	}
	~FedPipeline()
	{
		gst_element_set_state(pipeline, GST_STATE_NULL);
		gst_object_unref(src);
		gst_object_unref(sink);
		ck_assert(test::releasePipeline(pipeline));
	}
	// The first error on the bus within `timeout` ("" when none).
	std::string error(GstClockTime timeout) const
	{
		GstBus *bus = gst_element_get_bus(pipeline);
		GstMessage *msg = gst_bus_timed_pop_filtered(bus, timeout, GST_MESSAGE_ERROR);
		gst_object_unref(bus);
		if (!msg)
			return {};
		GError *err = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(msg, &err, &debug);
		std::string text = std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg))) + ": " +
				   err->message + " | " + (debug ? debug : "");
		g_clear_error(&err);
		g_free(debug);
		gst_message_unref(msg);
		return text;
	}
};

constexpr int kFenceSize = 64;

// The acquire fence as the consumer sees it: `fence`, noting when a wait on it begins, so that a
// test acts once the consumer is blocked instead of after a delay it guesses.
struct WatchedFence final : SyncWaiter {
	explicit WatchedFence(std::shared_ptr<CpuFence> f) : fence(std::move(f)) {}
	std::shared_ptr<CpuFence> fence;
	std::atomic<bool> waiting{ false }; // set by each wait(); the test clears it
	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override
	{
		waiting = true;
		return fence->wait(timeout);
	}
	Result<bool> isSignaled() override { return fence->isSignaled(); }
	int pollFd() const noexcept override { return fence->pollFd(); }
};

// A cpu RGBA frame whose bytes are written by another thread, which signals the frame's acquire
// fence only afterwards: the consumer must wait, or it reads zeros.
struct LateFrame {
	Frame fenced; // the frame with the acquire fence, handed to the pipeline
	std::shared_ptr<CpuFence> fence{};
	std::shared_ptr<WatchedFence> watched{}; // `fence` as the frame's acquire point waits on it
	std::optional<CpuMapping> mapping{};     // the producer's access, ended before the signal
};

// Whether the consumer is blocked in a wait on the late frame's fence, polled for up to 10 s
// (a bound for a hang only: the consumer gets there in milliseconds).
bool consumerWaits(const LateFrame &late)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (!late.watched->waiting && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	return late.watched->waiting;
}

LateFrame makeLateFrame(const BackendRef &cpu)
{
	AllocateRequest request{};
	request.format = PixelFormat::RGBA;
	request.width = request.height = kFenceSize;
	Result<Frame> frame = cpu->allocate(request);
	ck_assert_ok(frame);
	LateFrame late{ *frame };
	Result<CpuMapping> mapping = cpu->map(*frame, MapAccess::Write, kDefaultWaitTimeout);
	ck_assert_ok(mapping);
	for (uint32_t y = 0; y < kFenceSize; ++y)
		std::memset(mapping->data(0) + y * mapping->stride(0), 0, kFenceSize * 4);
	late.mapping.emplace(std::move(*mapping));
	auto fence = CpuFence::create();
	ck_assert_ok(fence);
	late.fence = *fence;
	late.watched = std::make_shared<WatchedFence>(late.fence);
	Result<SyncPoint> point = SyncPoint::fromWaiter(SyncKind::Cpu, late.watched);
	ck_assert_ok(point);
	late.fenced.setAcquire(*point);
	return late;
}

const std::string kFencedCaps =
	"video/x-raw(memory:GpuHandle),format=RGBA,width=" + std::to_string(kFenceSize) +
	",height=" + std::to_string(kFenceSize) + ",framerate=30/1";

START_TEST(late_fence_makes_the_consumer_wait)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	LateFrame late = makeLateFrame(*cpu);
	FedPipeline fed(kFencedCaps);
	GstBuffer *buffer = gst::bufferFromFrame(late.fenced, *cpu);
	ck_assert(buffer != nullptr);
	GST_BUFFER_PTS(buffer) = 0;
	ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(fed.src), buffer), GST_FLOW_OK);
	gst_app_src_end_of_stream(GST_APP_SRC(fed.src));
	bool blocked = false;
	std::thread producer([&late, &blocked] {
		// The 300 ms start once the consumer waits: it cannot find the fence signalled.
		blocked = consumerWaits(late);
		std::this_thread::sleep_for(std::chrono::milliseconds(300));
		for (uint32_t y = 0; y < kFenceSize; ++y)
			std::memset(late.mapping->data(0) + y * late.mapping->stride(0), 0x5a,
				    kFenceSize * 4);
		late.mapping.reset();
		late.fence->signal();
	});
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(fed.sink), 10 * GST_SECOND);
	producer.join();
	ck_assert_msg(blocked, "the consumer never waited on the fence");
	ck_assert_msg(sample != nullptr, "no frame: %s", fed.error(0).c_str());
	Run run;
	appendFrame(run, sample);
	gst_sample_unref(sample);
	ck_assert_uint_eq(run.bytes.size(), kFenceSize * kFenceSize * 4);
	for (uint8_t byte : run.bytes)
		ck_assert_uint_eq(byte, 0x5a);
	GstElement *down = gst_bin_get_by_name(GST_BIN(fed.pipeline), "down");
	GstStructure *stats = nullptr;
	g_object_get(down, "stats", &stats, nullptr);
	gst_object_unref(down);
	guint64 waits = 0, waited = 0;
	ck_assert(gst_structure_get_uint64(stats, "fence-waits", &waits));
	ck_assert(gst_structure_get_uint64(stats, "wait-time", &waited));
	gst_structure_free(stats);
	ck_assert_uint_eq(waits, 1);
	ck_assert_uint_ge(waited, 100 * GST_MSECOND);
}
END_TEST

START_TEST(fence_that_never_signals_is_an_element_error)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	LateFrame late = makeLateFrame(*cpu);
	FedPipeline fed(kFencedCaps, "timeout=300000000");
	GstBuffer *buffer = gst::bufferFromFrame(late.fenced, *cpu);
	GST_BUFFER_PTS(buffer) = 0;
	const auto started = std::chrono::steady_clock::now();
	ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(fed.src), buffer), GST_FLOW_OK);
	const std::string error = fed.error(30 * GST_SECOND);
	const auto took = std::chrono::steady_clock::now() - started;
	ck_assert_msg(error.find("down: ") == 0, "expected gpuhandledownload's error, got '%s'",
		      error.c_str());
	ck_assert_msg(error.find("fence") != std::string::npos, "%s", error.c_str());
	ck_assert(took >= std::chrono::milliseconds(250));
	// Its own 300 ms, not the default timeout (10 s): the bus was watched for 30 s.
	ck_assert(took < kDefaultWaitTimeout);
}
END_TEST

// A wait on a fence that is late ends at once when the pipeline flushes or goes to NULL: no state
// change waits for the fence's timeout.
START_TEST(flush_and_state_change_interrupt_a_fence_wait)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	LateFrame late = makeLateFrame(*cpu);
	auto fed = std::make_unique<FedPipeline>(kFencedCaps, "timeout=10000000000");
	GstBuffer *buffer = gst::bufferFromFrame(late.fenced, *cpu);
	GST_BUFFER_PTS(buffer) = 0;
	ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(fed->src), gst_buffer_ref(buffer)),
			 GST_FLOW_OK);
	ck_assert_msg(consumerWaits(late), "the download never waited on the fence");
	GstElement *down = gst_bin_get_by_name(GST_BIN(fed->pipeline), "down");
	GstPad *sinkPad = gst_element_get_static_pad(down, "sink");
	ck_assert(gst_pad_send_event(sinkPad, gst_event_new_flush_start()));
	// FLUSH_STOP takes the stream lock: it returns once the streaming thread left its wait.
	ck_assert(gst_pad_send_event(sinkPad, gst_event_new_flush_stop(TRUE)));
	// The flush ended the wait: nothing came out, and no error (a wait that sat out its 10 s
	// timeout would have posted one before FLUSH_STOP returned).
	ck_assert_string_eq(fed->error(0), ""); // a temporary: kept alive by the macro
	// A second wait, ended by the state change to NULL.
	GstSegment segment;
	gst_segment_init(&segment, GST_FORMAT_TIME);
	ck_assert(gst_pad_send_event(sinkPad, gst_event_new_segment(&segment)));
	late.watched->waiting = false;
	GstFlowReturn pushed = GST_FLOW_OK;
	std::thread pusher([&] { pushed = gst_pad_chain(sinkPad, buffer); });
	const bool blocked = consumerWaits(late);
	gst_element_set_state(fed->pipeline, GST_STATE_NULL);
	pusher.join();
	ck_assert_msg(blocked, "the second push never waited on the fence");
	// Interrupted: FLUSHING, not the ERROR of a wait that sat out its 10 s timeout.
	ck_assert_msg(pushed == GST_FLOW_FLUSHING, "the interrupted push returned %s",
		      gst_flow_get_name(pushed));
	gst_object_unref(sinkPad);
	gst_object_unref(down);
	fed.reset();
	late.fence->signal();
}
END_TEST

} // namespace

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-element-fences");
	TCase *tc = tcase_create("gst-element-fences");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, late_fence_makes_the_consumer_wait);
	tcase_add_test(tc, fence_that_never_signals_is_an_element_error);
	tcase_add_test(tc, flush_and_state_change_interrupt_a_fence_wait);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
