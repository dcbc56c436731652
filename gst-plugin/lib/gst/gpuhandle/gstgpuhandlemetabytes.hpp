// A buffer's plain-data metas as bytes, so that they cross processes with its frame.
#pragma once

#include <gpuhandle/result.h>

#include <cstddef>
#include <span>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// The metas that are data only, and so can be written out and made again in another process:
// GstVideoSEIUserDataUnregisteredMeta, GstVideoTimeCodeMeta (without its daily jam),
// GstVideoCaptionMeta, GstVideoAFDMeta, GstVideoBarMeta, GstVideoCropMeta,
// GstVideoRegionOfInterestMeta and GstReferenceTimestampMeta (a reference of one structure). Their
// structures (a region's params, a reference) cross with their fields of plain types (strings,
// integers, doubles, booleans); fields of other types are left out.
// All of them describe the pixels without depending on the memory, so they stay true when the
// frame crosses unchanged (the rule of transformMetaKeepingPixels in the plugin). Metas of other
// kinds hold pointers or objects of one process (GstVideoMeta's map functions, parent buffers,
// sync points) and do not cross.
GST_GPUHANDLE_API bool metaHasBytes(const GstMeta *meta) noexcept;

// Writes `buffer`'s metas that have bytes into `out`, in the buffer's order, after its flags that
// describe the frame (interlacing and field order, views, GAP, CORRUPTED, DISCONT, MARKER, HEADER,
// DROPPABLE, NON_DROPPABLE, DELTA_UNIT, DECODE_ONLY; not TAG_MEMORY, LIVE or SYNC_AFTER) when it
// has any; returns the bytes used (0 when it has neither). A meta that does not fit in what is
// left is left out (`dropped` counts those); the others still go. Allocates nothing.
// Format (little-endian): a version byte (1), then records of u16 kind, u32 length, payload.
GST_GPUHANDLE_API size_t writeMetaBytes(GstBuffer *buffer, std::span<std::byte> out,
					unsigned &dropped);

// Adds to `buffer` (writable) the metas `bytes` holds, as writeMetaBytes wrote them, and sets the
// flags it holds (flags this version does not know it leaves unset). Records of kinds this version
// does not know are skipped (a newer writer). InvalidArgument, with nothing
// added, when anything is malformed: the version, a length past the end, a field out of its
// range (time code, caption type, AFD, field numbers), a structure or field name GStreamer would
// refuse, a string that is not UTF-8, an unknown field type. Never hands the bytes to
// GStreamer's text parsers (they post criticals on some malformed input).
GST_GPUHANDLE_API Status addMetasFromBytes(std::span<const std::byte> bytes, GstBuffer *buffer);

} // namespace gst
} // namespace gpuhandle
