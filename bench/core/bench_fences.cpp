// Benchmark 5: time from a fence's signal to its waiter running, blocking, async and GSource,
// on an eventfd, a CpuFence, a Vulkan timeline semaphore and a GLsync, against raw waits; and
// the wake-up of one of 10,000 waits pending on one waiter thread.
#include <gpuhandle/cpu_fence.h>

#include "fences.h"

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace gpuhandle;
using namespace gpuhandle::bench;

namespace {

void drain(int fd)
{
	uint64_t count = 0;
	ssize_t got = ::read(fd, &count, sizeof count);
	(void)got; // non-blocking: nothing to read is fine
}

void post(int fd)
{
	uint64_t one = 1;
	ssize_t put = ::write(fd, &one, sizeof one);
	(void)put;
}

// eventfd: raw poll() against SyncPoint::fromFenceFd, waited every way.
WakeFigures eventfdCase(int n, WaiterThread &thread, LoopThread &loop, int &failures)
{
	WakeFigures f;
	f.rawWhat = "poll() on the eventfd";
	const int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	auto point = SyncPoint::fromFenceFd(SharedFd(UniqueFd(fcntl(efd, F_DUPFD_CLOEXEC, 0))));
	if (efd < 0 || !point.ok()) {
		std::printf("  skip wake/eventfd: no eventfd\n");
		failures++;
		return f;
	}
	auto arm = [&](int) { drain(efd); };
	auto signal = [&](int) { post(efd); };
	interleave(
		n,
		{
			[&](int count) {
				append(f.raw, measureBlocking(
						      count, arm,
						      [&](int) {
							      pollfd p{ efd, POLLIN, 0 };
							      return ::poll(&p, 1, 5000) == 1;
						      },
						      signal, failures));
			},
			[&](int count) {
				append(f.blocking,
				       measureBlocking(
					       count, arm,
					       [&](int) { return point->wait(kWaitBudget).ok(); },
					       signal, failures));
			},
			[&](int count) {
				append(f.async, measureCallback(
							count,
							[&](int, Stamp stamp) {
								drain(efd);
								auto ticket = thread.enqueue(
									*point, kWaitBudget,
									[stamp](Status s) {
										stamp(s.ok());
									});
								if (!ticket.ok())
									stamp(false);
							},
							signal, failures));
			},
			[&](int count) {
				append(f.source, measureCallback(
							 count,
							 [&](int, Stamp stamp) {
								 drain(efd);
								 loop.attachSyncSource(
									 *point, std::move(stamp));
							 },
							 signal, failures));
			},
		});
	close(efd);
	return f;
}

// CpuFence (condition variable for blocking waits, its eventfd for the others), re-armed with
// reset() between samples; the raw baseline is the eventfd poll() loop of eventfdCase.
WakeFigures cpuFenceCase(int n, WaiterThread &thread, LoopThread &loop,
			 const std::vector<double> &rawPoll, int &failures)
{
	WakeFigures f;
	f.rawWhat = "poll() on an eventfd";
	f.raw = rawPoll;
	auto fence = CpuFence::create();
	if (!fence.ok()) {
		std::printf("  skip wake/cpu-fence: %s\n", fence.error().message().c_str());
		failures++;
		return f;
	}
	std::shared_ptr<CpuFence> cpu = *fence;
	SyncPoint point = cpu->point();
	auto arm = [&](int) { cpu->reset(); };
	auto signal = [&](int) { cpu->signal(); };
	interleave(n,
		   {
			   [&](int count) {
				   append(f.blocking,
					  measureBlocking(
						  count, arm,
						  [&](int) { return point.wait(kWaitBudget).ok(); },
						  signal, failures));
			   },
			   [&](int count) {
				   append(f.async, measureCallback(
							   count,
							   [&](int, Stamp stamp) {
								   cpu->reset();
								   auto ticket = thread.enqueue(
									   point, kWaitBudget,
									   [stamp](Status s) {
										   stamp(s.ok());
									   });
								   if (!ticket.ok())
									   stamp(false);
							   },
							   signal, failures));
			   },
			   [&](int count) {
				   append(f.source,
					  measureCallback(
						  count,
						  [&](int, Stamp stamp) {
							  cpu->reset();
							  loop.attachSyncSource(point,
										std::move(stamp));
						  },
						  signal, failures));
			   },
		   });
	return f;
}

// `count` CpuFence waits pending on one fresh waiter thread. Sequential: each fence signalled
// alone, the next once its callback ran. Burst: all signalled back to back. Microseconds.
struct PendingFigures {
	std::vector<double> sequential, burst;
};
PendingFigures pendingWaits(int count, int &failures)
{
	PendingFigures out;
	auto thread = WaiterThread::create("bench-pending");
	if (!thread.ok()) {
		std::printf("  skip wake/pending: %s\n", thread.error().message().c_str());
		failures++;
		return out;
	}
	std::vector<std::shared_ptr<CpuFence>> fences;
	for (int i = 0; i < count; i++) {
		auto fence = CpuFence::create();
		if (!fence.ok()) {
			std::printf("  skip wake/pending: fence %d: %s\n", i,
				    fence.error().message().c_str());
			failures++;
			return out;
		}
		fences.push_back(*fence);
	}
	std::vector<Clock::time_point> signalled(static_cast<size_t>(count)),
		woken(static_cast<size_t>(count));
	std::atomic<int> done{ 0 }, failed{ 0 };
	auto enqueueAll = [&] {
		done.store(0);
		for (int i = 0; i < count; i++) {
			fences[size_t(i)]->reset();
			auto ticket = (*thread)->enqueue(
				fences[size_t(i)]->point(), std::chrono::seconds(60),
				[&, i](Status s) {
					woken[size_t(i)] = Clock::now();
					if (!s.ok())
						failed.fetch_add(1);
					done.fetch_add(1, std::memory_order_release);
				});
			if (!ticket.ok())
				failed.fetch_add(1);
		}
	};
	auto latencies = [&] {
		std::vector<double> us;
		for (int i = 0; i < count; i++)
			us.push_back(std::chrono::duration<double, std::micro>(woken[size_t(i)] -
									       signalled[size_t(i)])
					     .count());
		return us;
	};
	enqueueAll();
	for (int i = 0; i < count; i++) {
		signalled[size_t(i)] = Clock::now();
		fences[size_t(i)]->signal();
		while (done.load(std::memory_order_acquire) < i + 1)
			std::this_thread::yield();
	}
	out.sequential = latencies();
	enqueueAll();
	std::this_thread::sleep_for(std::chrono::milliseconds(20)); // every fd registered
	for (int i = 0; i < count; i++) {
		signalled[size_t(i)] = Clock::now();
		fences[size_t(i)]->signal();
	}
	while (done.load(std::memory_order_acquire) < count)
		std::this_thread::yield();
	out.burst = latencies();
	failures += failed.load();
	return out;
}

void reportPending(Report &out, int count, const PendingFigures &p)
{
	auto row = [&](const char *mode, const std::vector<double> &samples, const char *how,
		       double target) {
		if (samples.empty())
			return;
		const Stats s = statsOf(samples);
		char note[160];
		std::snprintf(note, sizeof note, "%s; median %.1f us, max %.1f us", how, s.median,
			      s.max);
		out.add({ "wake/pending-" + std::to_string(count) + "/" + mode + "/p99",
			  "1000 us (the target's bound)", 1000.0, s.p99, "us", target, note });
	};
	row("sequential", p.sequential, "one fence signalled at a time, the rest pending", 1.0);
	// No target: the later callbacks of a burst wait for the earlier ones (a throughput
	// figure).
	row("burst", p.burst, "all signalled back to back, queued behind each other", 0);
}

} // namespace

int main(int argc, char **argv)
{
	Options options = parseOptions(argc, argv);
	const int n = options.iterations(2000, 50);
	const int pending = options.iterations(10000, 500);
	// One eventfd per pending fence: raise the soft fd limit to what is needed (or the hard
	// one).
	rlimit fds{};
	if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < rlim_t(pending) + 256) {
		fds.rlim_cur = std::min(fds.rlim_max, rlim_t(pending) + 256);
		setrlimit(RLIMIT_NOFILE, &fds);
	}
	// Every thread on one CPU (threads inherit it): a wake-up then costs the software path and
	// a context switch, not the idle exit of another core, which on a VM or a busy machine
	// varies from 1 to 25 us between runs and would drown the differences between the waits.
	const int cpu = sched_getcpu();
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	cpu_set_t all;
	const bool pinned = sched_getaffinity(0, sizeof all, &all) == 0 && cpu >= 0 &&
			    sched_setaffinity(0, sizeof one, &one) == 0;
	Report out("gpuhandle-bench-fences: fence wake-up latency (issue 8, target 5)", options);
	auto thread = WaiterThread::create("bench-waiter");
	if (!thread.ok()) {
		std::fprintf(stderr, "bench-fences: %s\n", thread.error().message().c_str());
		return 77;
	}
	LoopThread loop;
	int failures = 0;
	if (pinned)
		std::printf("  all threads pinned to CPU %d (the software path of each wake-up)\n",
			    cpu);
	WakeFigures eventfdFigures = eventfdCase(n, **thread, loop, failures);
	reportWake(out, "eventfd", eventfdFigures);
	reportWake(out, "cpu-fence", cpuFenceCase(n, **thread, loop, eventfdFigures.raw, failures));
	benchVulkan(out, n, **thread, loop);
	benchGl(out, n, **thread, loop);
	// Pending waits on every CPU again: the burst measures how fast one waiter thread drains
	// 10,000 ready fences while another thread signals them.
	if (pinned)
		sched_setaffinity(0, sizeof all, &all);
	reportPending(out, pending, pendingWaits(pending, failures));
	int status = out.finish();
	if (failures)
		std::fprintf(stderr, "bench-fences: %d waits failed\n", failures);
	return failures ? 1 : status;
}
