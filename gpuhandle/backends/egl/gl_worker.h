// The OpenGL backend's own GL thread: posted work and waiting run() calls, in the order they came.
#pragma once

#include <gpuhandle/sync_waiter.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuhandle::gl {

// One GlDevice::run() call waiting for the own thread. It lives on the caller's stack: a caller
// that gives up before its work started takes it off the queue, so nothing outlives the caller
// and a call makes no heap block (a map and its end are two calls per frame).
struct OwnCall {
	enum class Stage : uint8_t { Queued, Running, Done };
	const std::function<void()> *work = nullptr;
	void *wanted = nullptr;  // the context the work needs current
	void *current = nullptr; // the context that was current where it ran
	Stage stage = Stage::Queued;
	std::condition_variable changed; // with Worker::mutex
};

// Posted work, or a waiting call.
struct Task {
	std::function<void()> work{};
	OwnCall *call = nullptr;
};

// A FIFO of tasks in a ring that grows and never shrinks, so that steady posting allocates
// nothing (a std::deque frees and makes a block every few entries).
class TaskRing
{
public:
	bool empty() const noexcept { return size_ == 0; }
	void push(Task task);
	Task pop(); // not empty
	// A queued call's task is left to run nothing.
	void cancel(const OwnCall *call) noexcept;

private:
	std::vector<Task> slots_{};
	size_t head_ = 0;
	size_t size_ = 0;
};

// The thread's queue and its context. Thread safety: every member under `mutex`, which post()
// and call() take.
struct Worker {
	enum class CallResult : uint8_t { Ran, NotStarted, Ended, WrongContext };

	std::mutex mutex;
	std::condition_variable wake;
	TaskRing queue;
	bool stop = false;
	bool exited = false; // the loop ended: the context is gone
	std::thread::id id{};
	void *display = nullptr; // EGLDisplay
	void *context = nullptr; // EGLContext

	// Queues `work`; dropped when the loop has ended (the context is gone, and with it
	// everything the work could delete).
	void post(std::function<void()> work);
	// Runs `work` on the thread where `wanted` is current, and waits for it. NotStarted when it
	// had not started by `deadline` (it never will then); started, it is waited for to its end
	// (it uses the caller's state). Ended when the loop is over; WrongContext when `wanted` was
	// not current there (the work did not run; `current` says which was).
	CallResult call(const std::function<void()> &work, void *wanted, const Deadline &deadline,
			void *&current);
	// The thread's loop: tasks in order until stopped with an empty queue.
	void serve();
};

} // namespace gpuhandle::gl
