// Frame bodies: made, shared by copies, written once a frame holds its own, recycled per thread
// (a streaming thread that makes and drops a frame per buffer allocates no body in steady state).
#include <gpuhandle/frame.h>

#include "thread_block_cache.h"

namespace gpuhandle {

Frame::Body Frame::empty_{ .refs = 2, .d = {} };

Frame::Body *Frame::Body::make(FrameDesc d)
{
	// Aggregate-initialised in place (the count is atomic: no copy): deleteToBlocks gives the
	// block back to the same lists.
	return new (detail::ThreadBlockCache<sizeof(Body), alignof(Body)>::take())
		Body{ .d = std::move(d) };
}

void Frame::Body::destroy(Body *body) noexcept
{
	detail::deleteToBlocks(body);
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
