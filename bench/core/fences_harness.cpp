// Benchmark 5's harness: wake-up samples for blocking and callback waits, the GLib loop thread.
#include <gpuhandle/glib_sync_source.h>

#include "fences.h"

#include <algorithm>
#include <cstdio>

namespace gpuhandle::bench {

namespace {

void spinUntil(const std::atomic<int> &value, int atLeast)
{
	while (value.load(std::memory_order_acquire) < atLeast)
		std::this_thread::yield();
}

double microseconds(Clock::time_point from, Clock::time_point to)
{
	return std::chrono::duration<double, std::micro>(to - from).count();
}

} // namespace

std::vector<double> measureBlocking(int n, const std::function<void(int)> &arm,
				    const std::function<bool(int)> &wait,
				    const std::function<void(int)> &signal, int &failures)
{
	std::atomic<int> go{ -1 }, parked{ -1 }, woke{ -1 }, failed{ 0 };
	std::vector<Clock::time_point> woken(static_cast<size_t>(n));
	std::thread waiter([&] {
		for (int i = 0; i < n; i++) {
			spinUntil(go, i);
			parked.store(i, std::memory_order_release);
			if (!wait(i))
				failed.fetch_add(1);
			woken[size_t(i)] = Clock::now();
			woke.store(i, std::memory_order_release);
		}
	});
	std::vector<double> samples;
	samples.reserve(size_t(n));
	for (int i = 0; i < n; i++) {
		arm(i);
		go.store(i, std::memory_order_release);
		spinUntil(parked, i);
		std::this_thread::sleep_for(kPark);
		const auto signalled = Clock::now();
		signal(i);
		spinUntil(woke, i);
		samples.push_back(microseconds(signalled, woken[size_t(i)]));
	}
	waiter.join();
	failures += failed.load();
	return samples;
}

std::vector<double> measureCallback(int n, const std::function<void(int, Stamp)> &arm,
				    const std::function<void(int)> &signal, int &failures)
{
	std::atomic<int> woke{ -1 }, failed{ 0 };
	std::vector<Clock::time_point> woken(static_cast<size_t>(n));
	std::vector<double> samples;
	samples.reserve(size_t(n));
	for (int i = 0; i < n; i++) {
		arm(i, [&, i](bool ok) {
			woken[size_t(i)] = Clock::now();
			if (!ok)
				failed.fetch_add(1);
			woke.store(i, std::memory_order_release);
		});
		std::this_thread::sleep_for(kPark);
		const auto signalled = Clock::now();
		signal(i);
		spinUntil(woke, i);
		samples.push_back(microseconds(signalled, woken[size_t(i)]));
	}
	failures += failed.load();
	return samples;
}

void interleave(int n, const std::vector<Variant> &variants)
{
	const int rounds = std::max(1, std::min(n / 10, 20));
	for (int r = 0; r < rounds; r++) {
		const int count = n / rounds + (r < n % rounds ? 1 : 0);
		for (const Variant &v : variants)
			v(count);
	}
}

namespace {

gboolean onSourceFired(int status, const char *, gpointer data)
{
	auto *stamp = static_cast<Stamp *>(data);
	(*stamp)(status == 0);
	return G_SOURCE_REMOVE;
}

void deleteStamp(gpointer data)
{
	delete static_cast<Stamp *>(data);
}

} // namespace

LoopThread::LoopThread()
	: context_(g_main_context_new()), loop_(g_main_loop_new(context_, FALSE)), thread_([this] {
		  g_main_context_push_thread_default(context_);
		  g_main_loop_run(loop_);
		  g_main_context_pop_thread_default(context_);
	  })
{
}

LoopThread::~LoopThread()
{
	// Quit from inside the loop, so that a quit before run() started is not lost.
	GSource *quit = g_idle_source_new();
	g_source_set_callback(
		quit,
		[](gpointer loop) -> gboolean {
			g_main_loop_quit(static_cast<GMainLoop *>(loop));
			return G_SOURCE_REMOVE;
		},
		loop_, nullptr);
	g_source_attach(quit, context_);
	g_source_unref(quit);
	thread_.join();
	g_main_loop_unref(loop_);
	g_main_context_unref(context_);
}

void LoopThread::attachSyncSource(SyncPoint point, Stamp stamp)
{
	GSource *source = makeSyncSource(std::move(point), kWaitBudget);
	g_source_set_callback(
		source, reinterpret_cast<GSourceFunc>(reinterpret_cast<void (*)()>(onSourceFired)),
		new Stamp(std::move(stamp)), deleteStamp);
	g_source_attach(source, context_);
	g_source_unref(source);
}

void reportWake(Report &out, const std::string &kind, const WakeFigures &f)
{
	const Stats raw = statsOf(f.raw);
	auto row = [&](const char *mode, const std::vector<double> &samples, double target,
		       const char *how) {
		if (samples.empty())
			return;
		const Stats s = statsOf(samples);
		char note[192];
		std::snprintf(note, sizeof note, "%s; median us; p99 %.1f us (raw p99 %.1f us)%s%s",
			      how, s.p99, raw.p99, f.note.empty() ? "" : "; ", f.note.c_str());
		out.add({ "wake/" + kind + "/" + mode, f.rawWhat, raw.median, s.median, "us",
			  target, note });
	};
	row("blocking", f.blocking, 1.5, "SyncPoint::wait on a waiter thread");
	row("async", f.async, f.asyncTarget, "WaiterThread::enqueue callback");
	row("gsource", f.source, f.asyncTarget, "makeSyncSource in a GMainLoop thread");
}

} // namespace gpuhandle::bench
