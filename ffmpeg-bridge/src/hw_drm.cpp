// DRM_PRIME AVFrames <-> Frames of one DmaBuf resource over the AVDRMFrameDescriptor's objects.
#include "hw_drm.h"

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/format_mappings.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

extern "C" {
#include <libavutil/mem.h>
}

namespace gpuhandle::ffmpeg::detail {

namespace {

constexpr const char *kField = "frame.data";

// A dup of one object's fd, with the AVFrame's buffers: the descriptor's own fds may close with
// the AVFrame (a VA-API mapping closes them when it is unmapped), and the producer must not
// recycle the memory (a decoder's surface pool) while a Frame reads it.
class DupFdAnchor final : public KeepAlive
{
public:
	DupFdAnchor(UniqueFd fd, std::shared_ptr<AvBuffersAnchor> buffers)
		: fd_(std::move(fd)), buffers_(std::move(buffers))
	{
	}
	int fd() const noexcept { return fd_.get(); }

private:
	UniqueFd fd_;
	std::shared_ptr<AvBuffersAnchor> buffers_;
};

Error descriptorError(const char *what, int index, long long value)
{
	return Error::format(
		ErrorCode::InvalidArgument, kField,
		"The DRM_PRIME frame's AVDRMFrameDescriptor is malformed: %s (index %d, "
		"value %lld).",
		what, index, value);
}

// The object's size when the descriptor says 0 (unknown): a memfd's from fstat, a dma-buf's
// from lseek(SEEK_END), which is how the kernel reports it.
uint64_t objectSize(const AVDRMObjectDescriptor &object, int fd)
{
	if (object.size)
		return object.size;
	struct stat st {};
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		return static_cast<uint64_t>(st.st_size);
	// A dup shares the file position with the producer's fd: it is put back where it was.
	const off_t position = lseek(fd, 0, SEEK_CUR);
	const off_t end = lseek(fd, 0, SEEK_END);
	if (position >= 0)
		(void)lseek(fd, position, SEEK_SET);
	return end > 0 ? static_cast<uint64_t>(end) : 0;
}

// Checks the counts, fds and indices of `d`; flattens its layers' planes into `planes`.
Status checkDescriptor(const AVDRMFrameDescriptor &d, std::array<AVDRMPlaneDescriptor, 4> &planes,
		       uint32_t &numPlanes)
{
	if (d.nb_objects < 1 || d.nb_objects > AV_DRM_MAX_PLANES)
		return descriptorError("nb_objects must be 1 to 4 (no fd, or too many)", 0,
				       d.nb_objects);
	for (int i = 0; i < d.nb_objects; i++)
		if (d.objects[i].fd < 0)
			return descriptorError("objects[].fd is not a file descriptor", i,
					       d.objects[i].fd);
	if (d.nb_layers < 1 || d.nb_layers > AV_DRM_MAX_PLANES)
		return descriptorError("nb_layers must be 1 to 4", 0, d.nb_layers);
	numPlanes = 0;
	for (int l = 0; l < d.nb_layers; l++) {
		const AVDRMLayerDescriptor &layer = d.layers[l];
		if (layer.nb_planes < 1 || layer.nb_planes > AV_DRM_MAX_PLANES)
			return descriptorError("layers[].nb_planes must be 1 to 4", l,
					       layer.nb_planes);
		for (int p = 0; p < layer.nb_planes; p++) {
			if (numPlanes == planes.size())
				return descriptorError(
					"the layers have more than 4 planes in all (a frame has "
					"at most 4); planes of layer",
					l, layer.nb_planes);
			const AVDRMPlaneDescriptor &plane = layer.planes[p];
			if (plane.object_index < 0 || plane.object_index >= d.nb_objects)
				return descriptorError("a plane's object_index is not one of the "
						       "nb_objects objects",
						       static_cast<int>(numPlanes),
						       plane.object_index);
			if (plane.offset < 0)
				return descriptorError("a plane's offset is negative",
						       static_cast<int>(numPlanes), plane.offset);
			if (plane.pitch <= 0 || plane.pitch > INT32_MAX)
				return descriptorError("a plane's pitch is not a positive int",
						       static_cast<int>(numPlanes), plane.pitch);
			planes[numPlanes++] = plane;
		}
	}
	return {};
}

// Closes the fds a wrap dup'd and frees the descriptor.
void freeDescriptor(AVDRMFrameDescriptor *d)
{
	for (int i = 0; i < d->nb_objects; i++)
		if (d->objects[i].fd >= 0)
			close(d->objects[i].fd);
	av_free(d);
}

// `held`, or the fd backend's DMA-BUF export of its memfds (udmabuf, where the kernel has it):
// a DRM_PRIME frame is made of DMA-BUFs. Errors: NotSupported saying why no export was made.
Result<std::shared_ptr<HeldFrame>> asDmaBufs(const std::shared_ptr<HeldFrame> &held)
{
	const Frame &frame = held->frame;
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		if (frame.resource(r).kind() == ResourceKind::DmaBuf)
			continue;
		static const Result<BackendRef> fd = openBackend(BackendKind::Fd);
		Result<Frame> exported = fd ? (*fd)->exportFrame(frame, ResourceKind::DmaBuf)
					    : Result<Frame>(fd.error());
		if (!exported)
			return Error::format(
				ErrorCode::NotSupported, "frame",
				"A DRM_PRIME frame is made of DMA-BUFs; the frame's %s "
				"memory could not become one: %s",
				resourceKindName(frame.resource(r).kind()),
				exported.error().message().c_str());
		// The source's gate is the one to open (when `held` goes), not a copy of it.
		exported->setRelease(ReleaseGate{});
		return std::make_shared<HeldFrame>(std::move(*exported));
	}
	return held;
}

} // namespace

Result<Frame> frameFromDrmDescriptor(const HwImport &in, const AVDRMFrameDescriptor *descriptor)
{
	if (!descriptor)
		return Error(ErrorCode::NullHandle, kField,
			     "The DRM_PRIME frame has no AVDRMFrameDescriptor in data[0].");
	const AVDRMFrameDescriptor &d = *descriptor;
	std::array<AVDRMPlaneDescriptor, 4> planes{};
	uint32_t numPlanes = 0;
	if (Status checked = checkDescriptor(d, planes, numPlanes); !checked)
		return std::move(checked).error();
	Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, in.format);
	if (!fourcc)
		return Error::format(ErrorCode::NotSupported, "frame.hw_frames_ctx",
				     "The DRM_PRIME frame's sw_format %s has no DRM fourcc: %s",
				     pixelFormatName(in.format), fourcc.error().message().c_str());
	// One layer names the whole format; it must be the frame's. One layer per plane names
	// plane formats (R8, GR88), which say nothing about the whole.
	if (d.nb_layers == 1) {
		Result<PixelFormat> layer = fromApiFormat(FormatApi::DrmFourcc, d.layers[0].format);
		if (layer && *layer != in.format)
			return Error::format(
				ErrorCode::FormatMismatch, kField,
				"The DRM_PRIME frame's layer is %s, its frames context "
				"says %s.",
				pixelFormatName(*layer), pixelFormatName(in.format));
	}
	const uint64_t modifier = d.objects[planes[0].object_index].format_modifier;
	DmaBufDesc desc;
	desc.fourcc = *fourcc;
	desc.modifier = modifier;
	desc.width = in.width;
	desc.height = in.height;
	desc.numObjects = static_cast<uint32_t>(d.nb_objects);
	for (int i = 0; i < d.nb_objects; i++) {
		const AVDRMObjectDescriptor &object = d.objects[i];
		UniqueFd dup(fcntl(object.fd, F_DUPFD_CLOEXEC, 0));
		if (!dup.isValid())
			return Error::format(ErrorCode::Backend, kField,
					     "Duplicating the DRM_PRIME frame's object %d (fd %d) "
					     "failed: %s.",
					     i, object.fd, std::strerror(errno));
		const uint64_t size = objectSize(object, dup.get());
		auto anchor = std::make_shared<DupFdAnchor>(std::move(dup), in.anchor);
		const int fd = anchor->fd();
		desc.objects[static_cast<size_t>(i)] = { SharedFd::borrow(fd, std::move(anchor)),
							 size };
	}
	for (uint32_t p = 0; p < numPlanes; p++) {
		const AVDRMPlaneDescriptor &plane = planes[p];
		if (d.objects[plane.object_index].format_modifier != modifier)
			return Error::format(
				ErrorCode::NotSupported, kField,
				"The DRM_PRIME frame's objects carry different "
				"modifiers (0x%llx, 0x%llx); a DmaBuf has one.",
				static_cast<unsigned long long>(modifier),
				static_cast<unsigned long long>(
					d.objects[plane.object_index].format_modifier));
		desc.planes[p] = { static_cast<uint32_t>(plane.object_index),
				   static_cast<uint64_t>(plane.offset),
				   static_cast<uint32_t>(plane.pitch) };
	}
	desc.numPlanes = numPlanes;
	Result<DmaBuf> dmaBuf = DmaBuf::create(std::move(desc));
	if (!dmaBuf)
		return std::move(dmaBuf).error();
	return Frame::wrap(in.format, in.width, in.height, in.colorimetry,
			   Resource(std::move(*dmaBuf)));
}

Result<Frame> frameFromDrmAVFrame(const HwImport &in)
{
	return frameFromDrmDescriptor(
		in, reinterpret_cast<const AVDRMFrameDescriptor *>(in.frame->data[0]));
}

Status wrapDrmAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames, AVFrame *out)
{
	Result<std::shared_ptr<HeldFrame>> dmaBufs = asDmaBufs(held);
	if (!dmaBufs)
		return std::move(dmaBufs).error();
	const Frame &frame = (*dmaBufs)->frame;
	Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, frame.format());
	if (!fourcc)
		return std::move(fourcc).error();
	auto *d = static_cast<AVDRMFrameDescriptor *>(av_mallocz(sizeof(AVDRMFrameDescriptor)));
	if (!d)
		return Error(ErrorCode::OutOfMemory, "frame", "av_mallocz() failed.");
	// The DMA-BUF object behind each descriptor object: (resource, subresource).
	std::array<std::pair<uint32_t, uint32_t>, AV_DRM_MAX_PLANES> objectOf{};
	AVDRMLayerDescriptor &layer = d->layers[0];
	d->nb_layers = 1;
	layer.format = *fourcc;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		const Resource &resource = frame.resource(view.resource);
		Result<const DmaBuf *> dmaBuf = resource.as<DmaBuf>();
		if (!dmaBuf) {
			freeDescriptor(d);
			return std::move(dmaBuf).error();
		}
		const DmaBufDesc &desc = (*dmaBuf)->desc();
		const auto key = std::make_pair(view.resource, view.subresource);
		int index = 0;
		while (index < d->nb_objects && objectOf[static_cast<size_t>(index)] != key)
			index++;
		if (index == d->nb_objects) {
			if (index == AV_DRM_MAX_PLANES) {
				freeDescriptor(d);
				return Error(ErrorCode::NotSupported, "frame",
					     "The frame's planes lie in more than the 4 DMA-BUF "
					     "objects an AVDRMFrameDescriptor holds.");
			}
			const DmaBufObject &object = desc.objects[view.subresource];
			UniqueFd dup = object.fd.dup();
			if (!dup.isValid()) {
				const int why = errno;
				freeDescriptor(d);
				return Error::format(
					ErrorCode::Backend, "frame",
					"Duplicating the frame's DMA-BUF fd %d failed: "
					"%s.",
					object.fd.get(), std::strerror(why));
			}
			objectOf[static_cast<size_t>(index)] = key;
			d->objects[index].fd = dup.release();
			d->objects[index].size = static_cast<size_t>(object.size);
			d->objects[index].format_modifier = desc.modifier;
			d->nb_objects++;
		}
		// An opaque view (stride 0) takes the DMA-BUF's own pitch of that plane.
		uint32_t pitch = view.stride;
		if (!pitch && p < desc.numPlanes)
			pitch = desc.planes[p].pitch;
		layer.planes[p].object_index = index;
		layer.planes[p].offset = static_cast<ptrdiff_t>(view.offset);
		layer.planes[p].pitch = static_cast<ptrdiff_t>(pitch);
		layer.nb_planes++;
	}
	// The lambda holds `held` too: an export's source, whose release gate opens only when
	// FFmpeg is done with the pages both share.
	AVBufferRef *buffer = bufferHolding(
		*dmaBufs, reinterpret_cast<uint8_t *>(d), sizeof *d, [held](uint8_t *data) {
			freeDescriptor(reinterpret_cast<AVDRMFrameDescriptor *>(data));
		});
	if (!buffer) {
		freeDescriptor(d);
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_create() failed.");
	}
	out->format = AV_PIX_FMT_DRM_PRIME;
	out->data[0] = reinterpret_cast<uint8_t *>(d);
	out->buf[0] = buffer;
	out->hw_frames_ctx = av_buffer_ref(hwFrames);
	if (!out->hw_frames_ctx)
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	return {};
}

} // namespace gpuhandle::ffmpeg::detail
