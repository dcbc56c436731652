#!/usr/bin/env python3
"""A PyGObject application that pulls memory:GpuHandle buffers from an appsink and uses the
GstGpuHandle-1.0 typelib: each buffer's memories are gpuhandle memory on the chosen backend, its
sync meta is waited and released, and its pixels (mapped from Python) are what the same source
gives without gpuhandle. Exit 0 on success, 77 (with the reason) when something it needs is
missing, 1 on a failure."""
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstApp", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstApp, GstVideo  # noqa: F401 (GstApp: pull_sample)
except (ImportError, ValueError) as error:
    print(f"SKIP: PyGObject with GStreamer's typelibs is not installed (Debian: python3-gst-1.0): {error}")
    sys.exit(77)
try:
    gi.require_version("GstGpuHandle", "1.0")
    from gi.repository import GstGpuHandle
except (ImportError, ValueError) as error:
    print(f"FAIL: the GstGpuHandle-1.0 typelib was not found (GI_TYPELIB_PATH): {error}")
    sys.exit(1)

FRAMES = 8
SOURCE = ("videotestsrc num-buffers=%d pattern=smpte ! "
          "video/x-raw,format=NV12,width=320,height=240" % FRAMES)


def visible_bytes(buffer, info):
    """The frame's visible NV12 bytes, plane by plane, strides dropped (a GstVideoMeta, where
    the buffer has one, says where the planes are)."""
    ok, mapped = buffer.map(Gst.MapFlags.READ)
    if not ok:
        raise AssertionError("the buffer did not map for reading from Python")
    try:
        data = bytes(mapped.data)
    finally:
        buffer.unmap(mapped)
    meta = GstVideo.buffer_get_video_meta(buffer)
    out = []
    for plane, rows in ((0, info.height), (1, (info.height + 1) // 2)):
        offset = meta.offset[plane] if meta else info.offset[plane]
        stride = meta.stride[plane] if meta else info.stride[plane]
        out += [data[offset + y * stride:offset + y * stride + info.width] for y in range(rows)]
    return b"".join(out)


def check_gpuhandle(buffer, caps):
    """The buffer is gpuhandle's, as the typelib sees it: caps feature, memories, sync meta
    (waited, then released so that a pooled producer may reuse the frame)."""
    if not caps.get_features(0).contains(GstGpuHandle.CAPS_FEATURE_MEMORY_GPU_HANDLE):
        raise AssertionError(f"caps are not {GstGpuHandle.CAPS_FEATURE_MEMORY_GPU_HANDLE}: "
                             f"{caps.to_string()}")
    for i in range(buffer.n_memory()):
        memory = buffer.peek_memory(i)
        if not GstGpuHandle.is_gpu_handle_memory(memory):
            raise AssertionError(f"memory {i} is not gpuhandle memory")
        if GstGpuHandle.memory_get_backend(memory) < 0:
            raise AssertionError(f"memory {i} names no backend")
    meta = GstGpuHandle.buffer_get_gpu_handle_sync_meta(buffer)
    if meta is not None:
        if not GstGpuHandle.sync_meta_wait(meta, 5 * Gst.SECOND):
            raise AssertionError("the sync meta's fence did not signal within 5 s")
        if not GstGpuHandle.sync_meta_is_signaled(meta):
            raise AssertionError("the sync meta says unsignalled after its wait")


def frames_of(description, gpuhandle):
    """Every frame the appsink "sink" of `description` pulls, as visible bytes."""
    pipeline = Gst.parse_launch(description)
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    frames = []
    try:
        while True:
            sample = sink.try_pull_sample(10 * Gst.SECOND)
            if sample is None:
                break
            buffer, caps = sample.get_buffer(), sample.get_caps()
            if gpuhandle:
                check_gpuhandle(buffer, caps)
            frames.append(visible_bytes(buffer, GstVideo.VideoInfo.new_from_caps(caps)))
            meta = GstGpuHandle.buffer_get_gpu_handle_sync_meta(buffer) if gpuhandle else None
            if meta is not None:
                GstGpuHandle.sync_meta_release(meta)
        error = bus.pop_filtered(Gst.MessageType.ERROR)
        if error is not None:
            raise PipelineError(error.parse_error()[0])
    finally:
        pipeline.set_state(Gst.State.NULL)
    return frames


class PipelineError(Exception):
    """The pipeline's first error; its domain and code tell a backend not there apart."""

    def __init__(self, gerror):
        super().__init__(gerror.message)
        self.not_found = gerror.matches(Gst.ResourceError.quark(), Gst.ResourceError.NOT_FOUND)


def main():
    Gst.init(None)
    GstGpuHandle.init()
    backends = sys.argv[1:] or ["cpu", "memfd"]
    reference = frames_of(SOURCE + " ! appsink name=sink sync=false", False)
    if len(reference) != FRAMES:
        print(f"FAIL: the reference pipeline gave {len(reference)} frames, not {FRAMES}")
        return 1
    tested = 0
    for backend in backends:
        try:
            got = frames_of(SOURCE + f" ! gpuhandleupload backend={backend} ! "
                            "appsink name=sink sync=false caps=video/x-raw(memory:GpuHandle)",
                            True)
        except PipelineError as error:
            if error.not_found and backend not in ("cpu", "memfd"):
                print(f"not here: {backend}: {error}")
                continue
            raise
        if got != reference:
            differing = sum(1 for a, b in zip(got, reference) if a != b)
            print(f"FAIL: {backend}: {len(got)} frames, {differing} differ from the pipeline "
                  "without gpuhandle")
            return 1
        print(f"ok: {backend}: {len(got)} memory:GpuHandle frames pulled by Python, same pixels")
        tested += 1
    return 0 if tested > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
