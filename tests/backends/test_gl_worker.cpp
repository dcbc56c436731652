// The OpenGL backend's own GL thread (egl/gl_worker.h), without a context: posted work and
// waiting calls run in the order they came (through the ring's growth), a call that had not
// started by its deadline never runs, a call allocates nothing on the caller's side, an ended
// thread refuses calls and drops posts, and work is refused where its context is not current.
// In the sync suite, which ThreadSanitizer runs.
#include "alloc_counter.h"
#include "egl/gl_worker.h"

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::gl;
using namespace std::chrono_literals;

namespace {

// A worker serving on its own thread (no EGL context: eglGetCurrentContext is null there, so
// work that wants no context runs), stopped and joined at the end.
struct Served {
	Worker worker;
	std::thread thread{ [this] { worker.serve(); } };
	~Served() { stop(); }
	void stop()
	{
		{
			std::lock_guard<std::mutex> lock(worker.mutex);
			worker.stop = true;
		}
		worker.wake.notify_all();
		if (thread.joinable())
			thread.join();
	}
	// Posts work that holds the thread until the returned promise is set.
	std::promise<void> block()
	{
		std::promise<void> release;
		auto held =
			std::make_shared<std::shared_future<void>>(release.get_future().share());
		worker.post([held] { (void)held->wait_for(10s); });
		return release;
	}
};

Worker::CallResult callNow(Worker &worker, const std::function<void()> &work,
			   WaitDuration timeout = 10s, void *wanted = nullptr)
{
	void *current = reinterpret_cast<void *>(1);
	Worker::CallResult result = worker.call(work, wanted, Deadline::after(timeout), current);
	ck_assert_ptr_null(current); // where it ran, no context was current
	return result;
}

} // namespace

START_TEST(posts_and_calls_run_in_the_order_they_came)
{
	Served served;
	std::promise<void> release = served.block();
	std::vector<std::string> order; // written on the worker only, read after it is done
	for (int i = 0; i < 20; i++)    // past the ring's first sizes (8, 16)
		served.worker.post([&order, i] { order.push_back("post " + std::to_string(i)); });
	// Queued behind the 20 posts (made before it); it waits until the thread is released.
	std::thread caller([&] {
		ck_assert(callNow(served.worker, [&order] { order.push_back("call"); }) ==
			  Worker::CallResult::Ran);
	});
	std::this_thread::sleep_for(20ms);
	release.set_value();
	caller.join();
	for (int i = 20; i < 30; i++)
		served.worker.post([&order, i] { order.push_back("post " + std::to_string(i)); });
	std::promise<void> done;
	served.worker.post([&done] { done.set_value(); });
	ck_assert(done.get_future().wait_for(10s) == std::future_status::ready);
	ck_assert_uint_eq(order.size(), 31);
	for (int i = 0; i < 20; i++)
		ck_assert(order[size_t(i)] == "post " + std::to_string(i));
	ck_assert_str_eq(order[20].c_str(), "call");
	for (int i = 20; i < 30; i++)
		ck_assert(order[size_t(i) + 1] == "post " + std::to_string(i));
}
END_TEST

START_TEST(a_call_not_started_by_its_deadline_never_runs)
{
	Served served;
	std::promise<void> release = served.block();
	std::atomic<bool> ran{ false };
	const std::function<void()> work = [&ran] { ran = true; };
	void *current = nullptr;
	ck_assert(served.worker.call(work, nullptr, Deadline::after(30ms), current) ==
		  Worker::CallResult::NotStarted);
	release.set_value();
	std::promise<void> done;
	served.worker.post([&done] { done.set_value(); });
	ck_assert(done.get_future().wait_for(10s) == std::future_status::ready);
	ck_assert(!ran.load()); // its task stayed queued, and ran nothing
}
END_TEST

START_TEST(steady_calls_allocate_nothing_on_the_caller)
{
	Served served;
	int runs = 0;
	const std::function<void()> work = [&runs] { runs++; };
	for (int i = 0; i < 10; i++) // the ring has its size
		ck_assert(callNow(served.worker, work) == Worker::CallResult::Ran);
	// No check inside the loop: Check's own bookkeeping of a passed check allocates.
	int ran = 0;
	void *current = nullptr;
	gpuhandle::test::AllocationScope scope;
	for (int i = 0; i < 200; i++)
		ran += served.worker.call(work, nullptr, Deadline::after(10s), current) ==
		       Worker::CallResult::Ran;
	const uint64_t allocations = scope.count();
	ck_assert_int_eq(ran, 200);
	ck_assert_uint_eq(allocations, 0);
	ck_assert_int_eq(runs, 210);
}
END_TEST

START_TEST(an_ended_thread_refuses_calls_and_drops_posts)
{
	Served served;
	served.stop();
	bool ran = false;
	served.worker.post([&ran] { ran = true; });
	void *current = nullptr;
	ck_assert(served.worker.call([&ran] { ran = true; }, nullptr, Deadline::after(1s),
				     current) == Worker::CallResult::Ended);
	ck_assert(!ran);
	ck_assert(served.worker.queue.empty());
}
END_TEST

START_TEST(work_wanting_another_context_does_not_run)
{
	Served served;
	bool ran = false;
	int context = 0; // any address: it is never current on the worker
	ck_assert(callNow(
			  served.worker, [&ran] { ran = true; }, 10s, &context) ==
		  Worker::CallResult::WrongContext);
	ck_assert(!ran);
}
END_TEST

int main()
{
	Suite *s = suite_create("gl-worker");
	TCase *tc = tcase_create("gl-worker");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, posts_and_calls_run_in_the_order_they_came);
	tcase_add_test(tc, a_call_not_started_by_its_deadline_never_runs);
	tcase_add_test(tc, steady_calls_allocate_nothing_on_the_caller);
	tcase_add_test(tc, an_ended_thread_refuses_calls_and_drops_posts);
	tcase_add_test(tc, work_wanting_another_context_does_not_run);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
