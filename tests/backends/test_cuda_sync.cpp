// CUDA waiters: argument checks and driver status everywhere; real CUevent waits where a driver
// loads.
#include <gpuhandle/backends/cuda_sync.h>

#ifdef GPUHANDLE_CUDA_TOOLKIT
#include <cuda.h>
#else
#include <ffnvcodec/dynlink_cuda.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <dlfcn.h>
#include <string>
#include <thread>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

int g_handle;
void *const kFake = &g_handle;

long long toMs(Clock::duration d)
{
	return static_cast<long long>(
		std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

// The driver calls the test itself makes to produce work; loaded like the library does.
struct TestDriver {
	CUresult(CUDAAPI *init)(unsigned int) = nullptr;
	CUresult(CUDAAPI *deviceGet)(CUdevice *, int) = nullptr;
	CUresult(CUDAAPI *ctxCreate)(CUcontext *, unsigned int, CUdevice) = nullptr;
	CUresult(CUDAAPI *ctxDestroy)(CUcontext) = nullptr;
	CUresult(CUDAAPI *ctxPopCurrent)(CUcontext *) = nullptr;
	CUresult(CUDAAPI *ctxPushCurrent)(CUcontext) = nullptr;
	CUresult(CUDAAPI *streamCreate)(CUstream *, unsigned int) = nullptr;
	CUresult(CUDAAPI *streamDestroy)(CUstream) = nullptr;
	CUresult(CUDAAPI *memAlloc)(CUdeviceptr *, size_t) = nullptr;
	CUresult(CUDAAPI *memFree)(CUdeviceptr) = nullptr;
	CUresult(CUDAAPI *memsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
	CUresult(CUDAAPI *eventCreate)(CUevent *, unsigned int) = nullptr;
	CUresult(CUDAAPI *eventRecord)(CUevent, CUstream) = nullptr;
	CUresult(CUDAAPI *eventDestroy)(CUevent) = nullptr;
	// Optional (CUDA >= 10): blocks the stream while a host function runs.
	CUresult(CUDAAPI *launchHostFunc)(CUstream, void(CUDAAPI *)(void *), void *) = nullptr;
	bool ok = false;
};

template<typename F>
void loadSymbol(void *library, const char *name, F &out, bool &ok)
{
	out = reinterpret_cast<F>(dlsym(library, name));
	ok = ok && out != nullptr;
}

const TestDriver &testDriver()
{
	static const TestDriver instance = [] {
		TestDriver d;
		void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!library)
			return d;
		d.ok = true;
		loadSymbol(library, "cuInit", d.init, d.ok);
		loadSymbol(library, "cuDeviceGet", d.deviceGet, d.ok);
		loadSymbol(library, "cuCtxCreate_v2", d.ctxCreate, d.ok);
		loadSymbol(library, "cuCtxDestroy_v2", d.ctxDestroy, d.ok);
		loadSymbol(library, "cuCtxPopCurrent_v2", d.ctxPopCurrent, d.ok);
		loadSymbol(library, "cuCtxPushCurrent_v2", d.ctxPushCurrent, d.ok);
		loadSymbol(library, "cuStreamCreate", d.streamCreate, d.ok);
		loadSymbol(library, "cuStreamDestroy_v2", d.streamDestroy, d.ok);
		loadSymbol(library, "cuMemAlloc_v2", d.memAlloc, d.ok);
		loadSymbol(library, "cuMemFree_v2", d.memFree, d.ok);
		loadSymbol(library, "cuMemsetD8Async", d.memsetD8Async, d.ok);
		loadSymbol(library, "cuEventCreate", d.eventCreate, d.ok);
		loadSymbol(library, "cuEventRecord", d.eventRecord, d.ok);
		loadSymbol(library, "cuEventDestroy_v2", d.eventDestroy, d.ok);
		bool optional = true;
		loadSymbol(library, "cuLaunchHostFunc", d.launchHostFunc, optional);
		return d;
	}();
	return instance;
}

#define ck_assert_cu(call) ck_assert_msg((call) == CUDA_SUCCESS, "%s failed", #call)

// A context with one stream and a 1 MiB allocation, current on the test thread.
struct CudaFixture {
	CUcontext context = nullptr;
	CUstream stream = nullptr;
	CUdeviceptr memory = 0;

	CudaFixture()
	{
		const TestDriver &d = testDriver();
		ck_assert(d.ok);
		CUdevice device = 0;
		ck_assert_cu(d.init(0));
		ck_assert_cu(d.deviceGet(&device, 0));
		ck_assert_cu(d.ctxCreate(&context, 0, device));
		ck_assert_cu(d.streamCreate(&stream, CU_STREAM_NON_BLOCKING));
		ck_assert_cu(d.memAlloc(&memory, 1 << 20));
	}
	~CudaFixture()
	{
		const TestDriver &d = testDriver();
		d.memFree(memory);
		d.streamDestroy(stream);
		d.ctxDestroy(context);
	}
	CUevent recordEvent() const
	{
		const TestDriver &d = testDriver();
		CUevent event = nullptr;
		ck_assert_cu(d.eventCreate(&event, CU_EVENT_DISABLE_TIMING));
		ck_assert_cu(d.eventRecord(event, stream));
		return event;
	}
};

// A host function that holds the stream until the test opens the gate.
void CUDAAPI holdStream(void *data)
{
	auto *gate = static_cast<std::atomic<bool> *>(data);
	while (!gate->load())
		std::this_thread::sleep_for(1ms);
}

} // namespace

// ---- Without a driver: what can be checked anywhere ----

START_TEST(event_arguments_name_fields)
{
	ck_assert_error(importCudaEvent(CudaEventSync{ nullptr, kFake, 0 }), ErrorCode::NullHandle,
			"event");
	ck_assert_error(importCudaEvent(CudaEventSync{ kFake, kFake, -1 }), ErrorCode::OutOfRange,
			"ordinal");
	ck_assert_error(adoptCudaEvent(CudaEventSync{ nullptr, kFake, 0 }), ErrorCode::NullHandle,
			"event");
	ck_assert_error(adoptCudaEvent(CudaEventSync{ kFake, nullptr, 0 }), ErrorCode::NullHandle,
			"context");
}
END_TEST

START_TEST(semaphore_arguments_name_fields)
{
	ck_assert_error(importCudaExternalSemaphore(CudaExternalSemaphoreSync{ nullptr, 1 }, kFake),
			ErrorCode::NullHandle, "semaphore");
	ck_assert_error(importCudaExternalSemaphore(CudaExternalSemaphoreSync{ kFake, {} },
						    nullptr),
			ErrorCode::NullHandle, "context");
}
END_TEST

START_TEST(driver_status_is_consistent)
{
	Status status = cudaDriverStatus();
	ck_assert(status.ok() == cudaDriverAvailable());
	if (!status.ok()) {
		ck_assert(status.error().code() == ErrorCode::NotSupported ||
			  status.error().code() == ErrorCode::Backend);
		ck_assert(status.error().message().find("libcuda") != std::string::npos ||
			  status.error().message().find("cuInit") != std::string::npos);
		// Valid-looking arguments then fail with the driver's reason, and nothing is
		// touched.
		auto point = importCudaEvent(CudaEventSync{ kFake, kFake, 0 });
		ck_assert(!point.ok());
		ck_assert(point.error().code() == status.error().code());
		ck_assert_string_eq(point.error().message(), status.error().message().c_str());
		ck_assert(!adoptCudaEvent(CudaEventSync{ kFake, kFake, 0 }).ok());
		ck_assert(!importCudaExternalSemaphore(CudaExternalSemaphoreSync{ kFake, 3 }, kFake)
				   .ok());
	}
}
END_TEST

// ---- With a driver (an NVIDIA machine) ----

START_TEST(event_after_memset_signals)
{
	CudaFixture cuda;
	const TestDriver &d = testDriver();
	ck_assert_cu(d.memsetD8Async(cuda.memory, 0x5a, 1 << 20, cuda.stream));
	CUevent event = cuda.recordEvent();
	{
		auto point = importCudaEvent(CudaEventSync{ event, cuda.context, 0 });
		ck_assert_ok(point);
		ck_assert(point->kind() == SyncKind::CudaEvent);
		ck_assert_ok(point->wait(5s));
		auto signaled = point->isSignaled();
		ck_assert_ok(signaled);
		ck_assert(*signaled);
	}
	ck_assert_cu(d.eventDestroy(event)); // borrowed: still ours to destroy
}
END_TEST

START_TEST(blocked_stream_times_out_then_signals)
{
	CudaFixture cuda;
	const TestDriver &d = testDriver();
	if (!d.launchHostFunc) {
		std::printf(
			"cuLaunchHostFunc is missing (driver older than CUDA 10): timeout case not run\n");
		ck_assert(true);
		return;
	}
	std::atomic<bool> gate{ false };
	ck_assert_cu(d.launchHostFunc(cuda.stream, holdStream, &gate));
	ck_assert_cu(d.memsetD8Async(cuda.memory, 0x11, 1 << 20, cuda.stream));
	auto point = adoptCudaEvent(CudaEventSync{ cuda.recordEvent(), cuda.context, 0 });

	// Measure first and open the gate before asserting, so a failure cannot leave the stream
	// held.
	bool imported = point.ok();
	Result<bool> early = imported ? point->isSignaled() : Result<bool>(false);
	auto start = Clock::now();
	Status timedOut = imported ? point->wait(50ms) : Status();
	auto elapsed = Clock::now() - start;
	gate = true;

	ck_assert_ok(point);
	ck_assert_ok(early);
	ck_assert(!*early);
	ck_assert_error(timedOut, ErrorCode::Timeout, "timeout");
	ck_assert_msg(elapsed >= 50ms, "took %lld ms", toMs(elapsed));
	ck_assert_ok(point->wait(5s));

	// The last copy goes on a thread with no current context: the waiter pushes its own.
	CUcontext popped = nullptr;
	ck_assert_cu(d.ctxPopCurrent(&popped));
	std::thread([p = std::move(*point)]() mutable { p = SyncPoint::noop(); }).join();
	ck_assert_cu(d.ctxPushCurrent(popped));
}
END_TEST

namespace {

int runNoFork(Suite *suite)
{
	// No fork: a CUDA context does not survive fork(), and the driver is initialised here.
	SRunner *runner = srunner_create(suite);
	srunner_set_fork_status(runner, CK_NOFORK);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed;
}

Suite *anywhereSuite()
{
	Suite *suite = suite_create("cuda_sync_anywhere");
	TCase *tc = tcase_create("arguments");
	tcase_add_test(tc, event_arguments_name_fields);
	tcase_add_test(tc, semaphore_arguments_name_fields);
	tcase_add_test(tc, driver_status_is_consistent);
	suite_add_tcase(suite, tc);
	return suite;
}

Suite *driverSuite()
{
	Suite *suite = suite_create("cuda_sync_driver");
	TCase *tc = tcase_create("events");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, event_after_memset_signals);
	tcase_add_test(tc, blocked_stream_times_out_then_signals);
	suite_add_tcase(suite, tc);
	return suite;
}

} // namespace

int main()
{
	int failed = runNoFork(anywhereSuite());
	Status driver = cudaDriverStatus();
	if (!driver.ok()) {
		std::printf("SKIP: CUDA waits not run: %s\n", driver.error().message().c_str());
		return failed ? EXIT_FAILURE : 77;
	}
	failed += runNoFork(driverSuite());
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
