// What the hardware AVFrame conversions share: buffer anchors, held frames, FFmpeg error text.
#include "hw_frames.h"
#include "thread_block_cache.h"

#include <new>

extern "C" {
#include <libavutil/error.h>
#include <libavutil/log.h>
}

namespace gpuhandle::ffmpeg::detail {

AvBuffersAnchor::~AvBuffersAnchor()
{
	for (size_t i = 0; i < count_; i++)
		av_buffer_unref(&inPlace_[i]);
	for (AVBufferRef *&ref : more_)
		av_buffer_unref(&ref);
}

bool AvBuffersAnchor::add(AVBufferRef *buffer)
{
	AVBufferRef *ref = av_buffer_ref(buffer);
	if (!ref)
		return false;
	if (count_ < inPlace_.size())
		inPlace_[count_++] = ref;
	else
		more_.push_back(ref);
	return true;
}

Result<std::shared_ptr<AvBuffersAnchor>> anchorBuffers(const AVFrame *frame)
{
	// Made per frame, dropped with it: from the thread's block lists.
	auto anchor = std::allocate_shared<AvBuffersAnchor>(
		gpuhandle::detail::ThreadRecyclingAllocator<AvBuffersAnchor>{});
	bool ok = true;
	for (AVBufferRef *buffer : frame->buf)
		if (buffer)
			ok = ok && anchor->add(buffer);
	for (int i = 0; i < frame->nb_extended_buf; i++)
		ok = ok && anchor->add(frame->extended_buf[i]);
	// A hardware frame's data[] are only meaningful with its frames context (and device).
	if (frame->hw_frames_ctx)
		ok = ok && anchor->add(frame->hw_frames_ctx);
	if (!ok)
		return Error::format(ErrorCode::OutOfMemory, "frame.buf",
				     "Referencing the AVFrame's buffers failed (av_buffer_ref).");
	return anchor;
}

void signalRelease(const ReleaseGate &release) noexcept
{
	if (release.isNone())
		return;
	if (Status signalled = release.signal(); !signalled)
		av_log(nullptr, AV_LOG_WARNING,
		       "gpuhandle: signalling the frame's release gate failed: %s\n",
		       signalled.error().message().c_str());
}

HeldFrame::~HeldFrame()
{
	signalRelease(frame.release());
}

namespace {

// What one AVBufferRef made by bufferHolding() owns.
struct HeldBuffer {
	std::shared_ptr<HeldFrame> held;
	std::function<void(uint8_t *)> onFree;
};

void freeHeldBuffer(void *opaque, uint8_t *data)
{
	auto *buffer = static_cast<HeldBuffer *>(opaque);
	if (buffer->onFree)
		buffer->onFree(data);
	delete buffer;
}

} // namespace

AVBufferRef *bufferHolding(std::shared_ptr<HeldFrame> held, uint8_t *data, size_t size,
			   std::function<void(uint8_t *)> onFree)
{
	// No exception may leave: this runs on FFmpeg's side of the API too.
	auto *opaque = new (std::nothrow) HeldBuffer{ std::move(held), std::move(onFree) };
	if (!opaque)
		return nullptr;
	AVBufferRef *buffer = av_buffer_create(data, size, freeHeldBuffer, opaque, 0);
	if (!buffer)
		delete opaque; // the caller still owns `data` and what onFree would have freed
	return buffer;
}

std::string avErrorText(int code)
{
	char text[AV_ERROR_MAX_STRING_SIZE] = {};
	if (av_strerror(code, text, sizeof text) < 0)
		return "AVERROR " + std::to_string(code);
	return text;
}

} // namespace gpuhandle::ffmpeg::detail
