// The OpenGL backend's own GL thread: its task ring, posting, waiting calls and loop.
#include "egl/gl_worker.h"

#include <algorithm>
#include <utility>

#include <EGL/egl.h>

namespace gpuhandle::gl {

void TaskRing::push(Task task)
{
	if (size_ == slots_.size()) {
		std::vector<Task> bigger(std::max<size_t>(8, slots_.size() * 2));
		for (size_t i = 0; i < size_; i++)
			bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
		slots_ = std::move(bigger);
		head_ = 0;
	}
	slots_[(head_ + size_) % slots_.size()] = std::move(task);
	size_++;
}

Task TaskRing::pop()
{
	Task task = std::exchange(slots_[head_], Task{});
	head_ = (head_ + 1) % slots_.size();
	size_--;
	return task;
}

void TaskRing::cancel(const OwnCall *call) noexcept
{
	for (size_t i = 0; i < size_; i++) {
		Task &task = slots_[(head_ + i) % slots_.size()];
		if (task.call == call)
			task.call = nullptr;
	}
}

void Worker::post(std::function<void()> work)
{
	{
		std::lock_guard<std::mutex> lock(mutex);
		if (exited)
			return;
		queue.push({ std::move(work), nullptr });
	}
	wake.notify_all();
}

Worker::CallResult Worker::call(const std::function<void()> &work, void *wanted,
				const Deadline &deadline, void *&current)
{
	OwnCall own;
	own.work = &work;
	own.wanted = wanted;
	std::unique_lock<std::mutex> lock(mutex);
	if (exited)
		return CallResult::Ended;
	queue.push({ {}, &own });
	wake.notify_all();
	auto done = [&own] { return own.stage == OwnCall::Stage::Done; };
	if (deadline.isNever()) {
		own.changed.wait(lock, done);
	} else if (!own.changed.wait_until(lock, deadline.when(), done)) {
		if (own.stage == OwnCall::Stage::Queued) {
			queue.cancel(&own);
			return CallResult::NotStarted;
		}
		own.changed.wait(lock, done);
	}
	current = own.current;
	return own.current == wanted ? CallResult::Ran : CallResult::WrongContext;
}

void Worker::serve()
{
	std::unique_lock<std::mutex> lock(mutex);
	for (;;) {
		wake.wait(lock, [this] { return stop || !queue.empty(); });
		if (queue.empty()) {
			exited = true;
			return;
		}
		Task task = queue.pop();
		if (OwnCall *own = task.call) {
			own->current = eglGetCurrentContext();
			own->stage = OwnCall::Stage::Running;
			lock.unlock();
			if (own->current == own->wanted)
				(*own->work)();
			lock.lock();
			// Notified under the lock: the caller cannot see Done, return and drop
			// `own` before this thread is done with it.
			own->stage = OwnCall::Stage::Done;
			own->changed.notify_all();
			continue;
		}
		lock.unlock();
		if (task.work)
			task.work();
		task = Task{}; // what the work held goes outside the lock
		lock.lock();
	}
}

} // namespace gpuhandle::gl
