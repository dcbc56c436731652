// OpenCL fence waiter on PoCL: user events time out, wake blocked waiters, pass failures through,
// and are released with the last copy; no fd leaks.
#define CL_TARGET_OPENCL_VERSION 120
#include <gpuhandle/backends/opencl_sync.h>

#include <chrono>
#include <poll.h>
#include <string>
#include <thread>

#include <CL/cl.h>

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "check_helpers.h"
#include "fd_count.h"
#include "opencl_context.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Each test runs in a forked child (Check's default) and opens its own context there: driver
// threads do not survive a fork.
cl_context g_context = nullptr;
cl_device_id g_device = nullptr;

void setUp()
{
	std::string why;
	g_context = test::openClContext(why, &g_device);
	ck_assert_msg(g_context, "%s", why.c_str());
}

void tearDown()
{
	if (g_context)
		clReleaseContext(g_context);
	g_context = nullptr;
}

cl_event userEvent()
{
	return test::makeUserEvent(g_context);
}

cl_uint referenceCount(cl_event event)
{
	cl_uint count = 0;
	ck_assert_int_eq(clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT, sizeof(count), &count,
					nullptr),
			 CL_SUCCESS);
	return count;
}

bool pollsReadable(int fd, int timeoutMs)
{
	pollfd entry = { fd, POLLIN, 0 };
	return poll(&entry, 1, timeoutMs) == 1 && (entry.revents & POLLIN);
}

} // namespace

START_TEST(invalid_input_is_refused)
{
	ck_assert_error(importOpenClEvent(OpenClEventSync{}), ErrorCode::NullHandle, "event");
}
END_TEST

START_TEST(unsignalled_event_times_out)
{
	cl_event event = userEvent();
	auto point = importOpenClEvent(OpenClEventSync{ event });
	ck_assert_ok(point);
	ck_assert_int_eq(static_cast<int>(point->kind()), static_cast<int>(SyncKind::OpenClEvent));
	ck_assert_int_eq(static_cast<int>(point->backend()), static_cast<int>(BackendKind::OpenCl));
	auto done = point->isSignaled();
	ck_assert_ok(done);
	ck_assert(!*done);
	ck_assert(point->waiter()->pollFd() >= 0);
	ck_assert(!pollsReadable(point->waiter()->pollFd(), 0));

	auto start = Clock::now();
	Status status = point->wait(50ms);
	auto took = Clock::now() - start;
	ck_assert_error(status, ErrorCode::Timeout, "timeout");
	ck_assert_int_eq(static_cast<int>(status.error().kind()),
			 static_cast<int>(ErrorKind::Recoverable));
	ck_assert_msg(took >= 50ms, "a 50 ms wait took %lld ms",
		      static_cast<long long>(
			      std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
	ck_assert_error(point->wait(0ns), ErrorCode::Timeout, "timeout");

	clSetUserEventStatus(event, CL_COMPLETE); // lets the driver drop its callback
	clReleaseEvent(event);
}
END_TEST

START_TEST(completion_from_another_thread_wakes_the_waiter)
{
	cl_event event = userEvent();
	auto point = importOpenClEvent(OpenClEventSync{ event });
	ck_assert_ok(point);
	std::thread signaller([event] {
		std::this_thread::sleep_for(30ms);
		clSetUserEventStatus(event, CL_COMPLETE);
	});
	Status status = point->wait(kDefaultWaitTimeout);
	signaller.join();
	ck_assert_ok(status); // woken by the completion, not the 10 s Timeout
	auto done = point->isSignaled();
	ck_assert_ok(done);
	ck_assert(*done);
	ck_assert(pollsReadable(point->waiter()->pollFd(), 0));
	ck_assert_ok(point->wait(0ns));
	clReleaseEvent(event);
}
END_TEST

START_TEST(already_complete_event_is_done)
{
	cl_event event = userEvent();
	clSetUserEventStatus(event, CL_COMPLETE);
	auto point = importOpenClEvent(OpenClEventSync{ event });
	ck_assert_ok(point);
	ck_assert_ok(point->wait(0ns));
	ck_assert_ok(point->wait(kWaitForever));
	clReleaseEvent(event);
}
END_TEST

START_TEST(failed_command_status_passes_through)
{
	cl_event event = userEvent();
	auto point = importOpenClEvent(OpenClEventSync{ event });
	ck_assert_ok(point);
	std::thread failer([event] {
		std::this_thread::sleep_for(20ms);
		clSetUserEventStatus(event, -42);
	});
	Status status = point->wait(kDefaultWaitTimeout);
	failer.join();
	ck_assert_error(status, ErrorCode::Backend, "event");
	ck_assert_msg(status.error().message().find("-42") != std::string::npos, "%s",
		      status.error().message().c_str());
	ck_assert_error(point->isSignaled(), ErrorCode::Backend, "event");
	clReleaseEvent(event);
}
END_TEST

START_TEST(queued_command_completes_after_its_dependency)
{
	// A marker that waits on a user event: importing it flushes its queue, as clWaitForEvents
	// would.
	cl_int error = CL_SUCCESS;
	cl_command_queue queue = clCreateCommandQueue(g_context, g_device, 0, &error);
	ck_assert_int_eq(error, CL_SUCCESS);
	cl_event gate = userEvent();
	cl_event marker = nullptr;
	ck_assert_int_eq(clEnqueueMarkerWithWaitList(queue, 1, &gate, &marker), CL_SUCCESS);
	auto point = importOpenClEvent(OpenClEventSync{ marker });
	ck_assert_ok(point);
	ck_assert_error(point->wait(20ms), ErrorCode::Timeout, "timeout");
	clSetUserEventStatus(gate, CL_COMPLETE);
	ck_assert_ok(point->wait(kDefaultWaitTimeout));
	auto done = point->isSignaled();
	ck_assert_ok(done);
	ck_assert(*done);
	clReleaseEvent(marker);
	clReleaseEvent(gate);
	clReleaseCommandQueue(queue);
}
END_TEST

START_TEST(event_is_released_with_the_last_copy)
{
	int fdsBefore = gpuhandle::test::openFdCount();
	cl_event event = userEvent();
	cl_uint before = referenceCount(event);
	{
		auto point = importOpenClEvent(OpenClEventSync{ event });
		ck_assert_ok(point);
		ck_assert_uint_eq(referenceCount(event), before + 1);
		SyncPoint copy = *point;
		ck_assert_uint_eq(referenceCount(event), before + 1); // copies share one reference
		ck_assert_ptr_eq(copy.raw<OpenClEventSync>()->event, event);
	}
	ck_assert_uint_eq(referenceCount(event), before);
	// Dropped while never completed: its eventfd is closed all the same.
	ck_assert_int_eq(gpuhandle::test::openFdCount(), fdsBefore);

	for (int i = 0; i < 50; ++i) {
		auto point = importOpenClEvent(OpenClEventSync{ event });
		ck_assert_ok(point);
	}
	clSetUserEventStatus(event, CL_COMPLETE); // the callbacks now find their waiters gone
	for (int i = 0; i < 50; ++i) {
		auto point = importOpenClEvent(OpenClEventSync{ event });
		ck_assert_ok(point);
		ck_assert_ok(point->wait(kDefaultWaitTimeout));
	}
	ck_assert_uint_eq(referenceCount(event), before);
	clReleaseEvent(event);
	ck_assert_int_eq(gpuhandle::test::openFdCount(), fdsBefore);
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
	Suite *s = suite_create("opencl-sync");
	TCase *tc = tcase_create("opencl-sync");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setUp, tearDown);
	tcase_add_test(tc, invalid_input_is_refused);
	tcase_add_test(tc, unsignalled_event_times_out);
	tcase_add_test(tc, completion_from_another_thread_wakes_the_waiter);
	tcase_add_test(tc, already_complete_event_is_done);
	tcase_add_test(tc, failed_command_status_passes_through);
	tcase_add_test(tc, queued_command_completes_after_its_dependency);
	tcase_add_test(tc, event_is_released_with_the_last_copy);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
