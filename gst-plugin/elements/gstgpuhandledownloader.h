// Frames into a negotiated GStreamer memory (system, GL, Vulkan, DMA-BUF, CUDA) through the path
// planner: the state and a frame's steps that gpuhandledownload and gpuhandleavdec share (not
// installed).
#pragma once

#include <gpuhandle/backends/planner.h>

#include "gstgpuhandleelements.h"
#include "gstgpuhandlestats.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

namespace gpuhandle::gst::download {

// One element's way into its output memory. Errors are posted on `element`; logs go to
// `category` under it.
struct Downloader {
	GstElement *element = nullptr;
	GstDebugCategory *category = nullptr;
	// Carries timestamps, flags and metas from an input buffer onto an output made from it
	// (GstBaseTransform's copy_metadata); null where the element sets them itself (a decoder).
	void (*carryMetadata)(GstElement *element, GstBuffer *out, GstBuffer *in) = nullptr;

	std::mutex mutex{};
	bool allowCopy = true;
	guint64 timeoutNs = defaultTimeoutNs();

	PathStats stats{};
	DevicesSlot devices{};
	// Set by a flush and by the state change to READY: fence waits end at once (FLUSHING).
	std::atomic<bool> flushing{ false };

	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	// Where frames go (the memory type of the negotiated src caps), its adapter and the backend
	// that adapter opened (none for system memory).
	const MemoryTypeInfo *target = memoryTypeInfo(BufferMemory::System);
	MemoryAdapter *targetAdapter = nullptr;
	BackendRef targetBackend{};
	bool downstreamVideoMeta = false;
	bool downstreamSyncMeta = false; // downstream waits on GstGpuHandleSyncMeta itself
	ExecutionPath::Kind lastPath = ExecutionPath::Kind::NotRun; // logged when it changes
	ImportRoute lastRoute = ImportRoute::Direct;
	// The input backend whose frames did not wrap as the target's memory as they are: its next
	// frames go straight to the planner (whose Direct route still wraps one that would),
	// without an error made per frame. Cleared when caps are set (the target may change).
	const void *noDirectWrapFrom = nullptr;
	// Every output memory type's adapter: the GL, Vulkan and CUDA objects shared with the
	// neighbours live in them (each guarded against the queries of other threads).
	MemoryAdapters adapters{ MemoryRole::Output };
};

WaitDuration timeoutOf(Downloader &s);
bool allowCopyOf(Downloader &s);

// The target's name in messages ("system memory", "GLMemory", ...).
const char *targetName(const Downloader &s);
bool toSystemMemory(const Downloader &s);

// New caps: frames of `info` (of gpuhandle's `format`) go into `target`, whose device is opened
// through its adapter (GL and Vulkan shared with the neighbours, CUDA, the fd backend); posts the
// element error and returns false when it cannot.
bool setTarget(Downloader &s, const GstVideoInfo &info, PixelFormat format,
	       const MemoryTypeInfo &target);
// decide_allocation's part: whether downstream reads GstVideoMeta and waits on sync metas itself.
void noteDownstreamMetas(Downloader &s, GstQuery *query);
// The neighbours' context queries and set_context, answered from the shared device objects.
bool answerQuery(Downloader &s, GstQuery *query);
void setContext(Downloader &s, GstContext *context);
// The element stops: the target's device and the neighbours' objects go.
void release(Downloader &s);

// The frame of `inbuf` (memory:GpuHandle) and its backend: one memory's own frame, used in place,
// where it holds the whole frame (saving a copy of the frame per buffer); else assembled into
// `assembled`. Null, with the element error posted, when the buffer is not gpuhandle memory.
const Frame *inputFrame(Downloader &s, GstBuffer *inbuf, std::optional<Frame> &assembled,
			BackendRef &backend);

// Timestamps, flags and metas onto an output we made (carryMetadata, where set).
void copyMetadata(Downloader &s, GstBuffer *out, GstBuffer *in);
// Counts a frame's path and logs each change of path.
void notePath(Downloader &s, ExecutionPath path, ImportRoute route);

// The frame's acquire point waited in slices that a flush ends (the element error posted when it
// does not signal in time), as a flow return; a frame mapped (through its backend, or GStreamer's
// own memory it wraps) and copied into `out`.
enum class Acquired { Yes, Flushing, Failed };
Acquired waitAcquire(Downloader &s, const Frame &frame, WaitDuration timeout);
GstFlowReturn flowOf(Acquired acquired);
bool copyFrameInto(Downloader &s, GstBuffer *inbuf, const Frame &frame, const BackendRef &backend,
		   GstBuffer *out, WaitDuration timeout);

// gstgpuhandledownloaddevice.cpp: one frame (of `inbuf`, a memory:GpuHandle buffer, whose
// backend is `backend`) into the target API's memory: `*outbuf` is set, or the error posted.
GstFlowReturn toDevice(Downloader &s, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf);

} // namespace gpuhandle::gst::download
