// Frame bodies: made, shared by copies, written once a frame holds its own, recycled per thread.
#include <gpuhandle/frame.h>

#include <array>
#include <new>

namespace gpuhandle {

namespace {

// A thread keeps up to this many bodies it let go of, for the next frames it makes: a streaming
// thread that makes and drops a frame per buffer then allocates no body in steady state. Frames
// made on one thread and dropped on another still allocate (as malloc's own per-thread caches
// would), bounded by the cap.
constexpr uint32_t kCachedBodies = 8;

// Trivially destructible, so that it can be read at any point of the thread's exit; the
// reaper below empties it when the thread's C++ destructors run.
struct BodyCache {
	std::array<void *, kCachedBodies> storage;
	uint32_t count;
	bool closed; // the thread is exiting: no more caching
};
thread_local BodyCache t_cache{};

struct BodyCacheReaper {
	~BodyCacheReaper()
	{
		for (uint32_t i = 0; i < t_cache.count; ++i)
			::operator delete(t_cache.storage[i]);
		t_cache.count = 0;
		t_cache.closed = true;
	}
};

// Registers the reaper of this thread (once): only threads that cached a body pay for one.
void armReaper()
{
	thread_local BodyCacheReaper reaper;
	(void)reaper;
}

} // namespace

Frame::Body Frame::empty_{ .refs = 2, .d = {} };

Frame::Body *Frame::Body::make(FrameDesc d)
{
	BodyCache &cache = t_cache;
	void *storage = cache.count ? cache.storage[--cache.count] : ::operator new(sizeof(Body));
	return new (storage) Body{ .d = std::move(d) };
}

void Frame::Body::destroy(Body *body) noexcept
{
	body->~Body();
	BodyCache &cache = t_cache;
	if (cache.closed || cache.count == kCachedBodies) {
		::operator delete(body);
		return;
	}
	if (cache.count == 0)
		armReaper();
	cache.storage[cache.count++] = body;
}

Frame::Frame(FrameDesc d) : body_(Body::make(std::move(d)))
{
}

// Out of line: inlined into std::optional<Frame>::reset, GCC 12 warns (maybe-uninitialized)
// that the body pointer of a disengaged optional is read.
Frame::~Frame()
{
	Body::release(body_);
}

FrameDesc &Frame::ownDesc() noexcept
{
	// Acquire: a copy dropped on another thread has finished reading the body before this
	// frame writes it.
	if (body_->refs.load(std::memory_order_acquire) != 1) {
		Body *own = Body::make(body_->d);
		Body::release(body_);
		body_ = own;
	}
	return body_->d;
}

} // namespace gpuhandle
