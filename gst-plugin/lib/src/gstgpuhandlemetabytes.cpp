// A buffer's plain-data metas as bytes and back: the record format and one codec per meta kind.
#include "gstgpuhandlemetabytesio.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <gst/gpuhandle/gstgpuhandlemetabytes.hpp>
#include <gst/video/video.h>

namespace gpuhandle::gst {

namespace {

using metabytes::Reader;
using metabytes::readStructure;
using metabytes::Writer;
using metabytes::writeStructure;

constexpr uint8_t kFormatVersion = 1;
constexpr size_t kRecordHeader = 6; // u16 kind, u32 length

enum class Kind : uint16_t {
	SeiUnregistered = 1,
	TimeCode = 2,
	Caption = 3,
	Afd = 4,
	Bar = 5,
	Crop = 6,
	RegionOfInterest = 7,
	ReferenceTimestamp = 8,
	// Not a meta: the buffer's flags that describe its frame (kFrameFlags), written first
	BufferFlags = 9,
};

// The buffer flags that say something about the frame itself, and so cross with it (as
// unixfdsink carries them): interlacing and field order (a mixed-mode stream says per buffer
// which frames are interlaced), views, and GAP, CORRUPTED, DISCONT, MARKER, HEADER, DROPPABLE,
// NON_DROPPABLE, DELTA_UNIT, DECODE_ONLY. Not: TAG_MEMORY (this process's memory), LIVE and
// SYNC_AFTER (the producer's pipeline's).
constexpr guint kFrameFlags =
	GST_BUFFER_FLAG_DISCONT | GST_BUFFER_FLAG_CORRUPTED | GST_BUFFER_FLAG_MARKER |
	GST_BUFFER_FLAG_HEADER | GST_BUFFER_FLAG_GAP | GST_BUFFER_FLAG_DROPPABLE |
	GST_BUFFER_FLAG_DELTA_UNIT | GST_BUFFER_FLAG_NON_DROPPABLE | GST_BUFFER_FLAG_DECODE_ONLY |
	GST_VIDEO_BUFFER_FLAG_INTERLACED | GST_VIDEO_BUFFER_FLAG_TFF | GST_VIDEO_BUFFER_FLAG_RFF |
	GST_VIDEO_BUFFER_FLAG_ONEFIELD | GST_VIDEO_BUFFER_FLAG_MULTIPLE_VIEW |
	GST_VIDEO_BUFFER_FLAG_FIRST_IN_BUNDLE;

// The kind `meta` is written as; 0 when it has no bytes (SEI and caption metas without data
// included: GStreamer makes none such).
uint16_t kindOf(const GstMeta *meta)
{
	const GType api = meta->info->api;
	if (api == GST_VIDEO_SEI_USER_DATA_UNREGISTERED_META_API_TYPE)
		return reinterpret_cast<const GstVideoSEIUserDataUnregisteredMeta *>(meta)->size
			       ? uint16_t(Kind::SeiUnregistered)
			       : 0;
	if (api == GST_VIDEO_TIME_CODE_META_API_TYPE)
		return uint16_t(Kind::TimeCode);
	if (api == GST_VIDEO_CAPTION_META_API_TYPE)
		return reinterpret_cast<const GstVideoCaptionMeta *>(meta)->size
			       ? uint16_t(Kind::Caption)
			       : 0;
	if (api == GST_VIDEO_AFD_META_API_TYPE)
		return uint16_t(Kind::Afd);
	if (api == GST_VIDEO_BAR_META_API_TYPE)
		return uint16_t(Kind::Bar);
	if (api == GST_VIDEO_CROP_META_API_TYPE)
		return uint16_t(Kind::Crop);
	if (api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)
		return uint16_t(Kind::RegionOfInterest);
	if (api == GST_REFERENCE_TIMESTAMP_META_API_TYPE) {
		// A reference is one structure ("timestamp/x-ntp, host=..."): caps of more, or
		// with features, do not cross.
		const GstCaps *caps =
			reinterpret_cast<const GstReferenceTimestampMeta *>(meta)->reference;
		return caps && gst_caps_get_size(caps) == 1 &&
				       gst_caps_features_is_equal(
					       gst_caps_get_features(caps, 0),
					       GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)
			       ? uint16_t(Kind::ReferenceTimestamp)
			       : 0;
	}
	return 0;
}

// The payload of `meta`, of kind `kind`.
void writePayload(Writer &w, Kind kind, GstMeta *meta)
{
	switch (kind) {
	case Kind::SeiUnregistered: {
		auto *m = reinterpret_cast<GstVideoSEIUserDataUnregisteredMeta *>(meta);
		w.putBytes(m->uuid, sizeof m->uuid);
		w.putBytes(m->data, m->size);
		break;
	}
	case Kind::TimeCode: {
		const GstVideoTimeCode &tc = reinterpret_cast<GstVideoTimeCodeMeta *>(meta)->tc;
		for (guint v : { tc.config.fps_n, tc.config.fps_d, guint(tc.config.flags), tc.hours,
				 tc.minutes, tc.seconds, tc.frames, tc.field_count })
			w.put<uint32_t>(v);
		break;
	}
	case Kind::Caption: {
		auto *m = reinterpret_cast<GstVideoCaptionMeta *>(meta);
		w.put<uint32_t>(static_cast<uint32_t>(m->caption_type));
		w.putBytes(m->data, m->size);
		break;
	}
	case Kind::Afd: {
		auto *m = reinterpret_cast<GstVideoAFDMeta *>(meta);
		w.put<uint8_t>(m->field);
		w.put<uint32_t>(static_cast<uint32_t>(m->spec));
		w.put<uint32_t>(static_cast<uint32_t>(m->afd));
		break;
	}
	case Kind::Bar: {
		auto *m = reinterpret_cast<GstVideoBarMeta *>(meta);
		w.put<uint8_t>(m->field);
		w.put<uint8_t>(m->is_letterbox ? 1 : 0);
		w.put<uint32_t>(m->bar_data1);
		w.put<uint32_t>(m->bar_data2);
		break;
	}
	case Kind::Crop: {
		auto *m = reinterpret_cast<GstVideoCropMeta *>(meta);
		for (guint v : { m->x, m->y, m->width, m->height })
			w.put<uint32_t>(v);
		break;
	}
	case Kind::RegionOfInterest: {
		auto *m = reinterpret_cast<GstVideoRegionOfInterestMeta *>(meta);
		for (guint v : { m->x, m->y, m->w, m->h })
			w.put<uint32_t>(v);
		w.put<int32_t>(m->id);
		w.put<int32_t>(m->parent_id);
		const gchar *type = g_quark_to_string(m->roi_type);
		w.putString(type ? type : "");
		w.put<uint16_t>(static_cast<uint16_t>(g_list_length(m->params)));
		for (GList *p = m->params; p; p = p->next)
			writeStructure(w, static_cast<const GstStructure *>(p->data));
		break;
	}
	case Kind::ReferenceTimestamp: {
		auto *m = reinterpret_cast<GstReferenceTimestampMeta *>(meta);
		w.put<uint64_t>(m->timestamp);
		w.put<uint64_t>(m->duration);
		writeStructure(w, gst_caps_get_structure(m->reference, 0));
		break;
	}
	case Kind::BufferFlags: break; // written by writeMetaBytes itself
	}
}

Status malformed(const char *what)
{
	return Error::format(ErrorCode::InvalidArgument, "metas", "Metas from another process: %s.",
			     what);
}

// One record's payload: checked, and added to `target` unless it is null (the first pass).
Status readRecord(Kind kind, Reader &r, GstBuffer *target)
{
	switch (kind) {
	case Kind::SeiUnregistered: {
		auto uuid = r.getBytes(16);
		auto data = r.rest();
		if (!r.ok() || data.empty())
			return malformed("an SEI record without its UUID or data");
		if (target)
			gst_buffer_add_video_sei_user_data_unregistered_meta(
				target,
				reinterpret_cast<guint8 *>(const_cast<std::byte *>(uuid.data())),
				reinterpret_cast<guint8 *>(const_cast<std::byte *>(data.data())),
				data.size());
		return {};
	}
	case Kind::TimeCode: {
		uint32_t v[8];
		for (uint32_t &x : v)
			x = r.get<uint32_t>();
		if (!r.atEnd() || !v[0] || !v[1])
			return malformed(
				"a time code record of the wrong size or without a frame rate");
		GstVideoTimeCode tc;
		gst_video_time_code_init(&tc, v[0], v[1], nullptr, GstVideoTimeCodeFlags(v[2]),
					 v[3], v[4], v[5], v[6], v[7]);
		const bool valid = gst_video_time_code_is_valid(&tc);
		gst_video_time_code_clear(&tc);
		if (!valid)
			return malformed("a time code that is not valid");
		if (target)
			gst_buffer_add_video_time_code_meta_full(target, v[0], v[1], nullptr,
								 GstVideoTimeCodeFlags(v[2]), v[3],
								 v[4], v[5], v[6], v[7]);
		return {};
	}
	case Kind::Caption: {
		const uint32_t type = r.get<uint32_t>();
		auto data = r.rest();
		if (!r.ok() || type > GST_VIDEO_CAPTION_TYPE_CEA708_CDP || data.empty())
			return malformed("a caption record of an unknown type or without data");
		if (target)
			gst_buffer_add_video_caption_meta(
				target, GstVideoCaptionType(type),
				reinterpret_cast<const guint8 *>(data.data()), data.size());
		return {};
	}
	case Kind::Afd: {
		const uint8_t field = r.get<uint8_t>();
		const uint32_t spec = r.get<uint32_t>();
		const uint32_t afd = r.get<uint32_t>();
		if (!r.atEnd() || field > 1 || spec > GST_VIDEO_AFD_SPEC_SMPTE_ST2016_1 ||
		    afd > 0xf)
			return malformed("an AFD record out of range");
		if (target)
			gst_buffer_add_video_afd_meta(target, field, GstVideoAFDSpec(spec),
						      GstVideoAFDValue(afd));
		return {};
	}
	case Kind::Bar: {
		const uint8_t field = r.get<uint8_t>();
		const uint8_t letterbox = r.get<uint8_t>();
		const uint32_t bar1 = r.get<uint32_t>();
		const uint32_t bar2 = r.get<uint32_t>();
		if (!r.atEnd() || field > 1 || letterbox > 1)
			return malformed("a bar record out of range");
		if (target)
			gst_buffer_add_video_bar_meta(target, field, letterbox, bar1, bar2);
		return {};
	}
	case Kind::Crop: {
		uint32_t v[4];
		for (uint32_t &x : v)
			x = r.get<uint32_t>();
		if (!r.atEnd())
			return malformed("a crop record of the wrong size");
		if (target) {
			GstVideoCropMeta *m = gst_buffer_add_video_crop_meta(target);
			m->x = v[0];
			m->y = v[1];
			m->width = v[2];
			m->height = v[3];
		}
		return {};
	}
	case Kind::RegionOfInterest: {
		uint32_t v[4];
		for (uint32_t &x : v)
			x = r.get<uint32_t>();
		const int32_t id = r.get<int32_t>();
		const int32_t parent = r.get<int32_t>();
		const std::string type = r.getString();
		const uint16_t params = r.get<uint16_t>();
		if (!r.ok() || type.empty())
			return malformed("a region of interest record without its type");
		GstVideoRegionOfInterestMeta *m = nullptr;
		if (target) {
			m = gst_buffer_add_video_region_of_interest_meta(target, type.c_str(), v[0],
									 v[1], v[2], v[3]);
			m->id = id;
			m->parent_id = parent;
		}
		for (uint16_t i = 0; i < params; ++i) {
			GstStructure *s = readStructure(r);
			if (!s) // on the first pass: nothing was added yet
				return malformed(
					"a region of interest's param that does not parse");
			if (m)
				gst_video_region_of_interest_meta_add_param(m, s);
			else
				gst_structure_free(s);
		}
		if (!r.atEnd())
			return malformed("a region of interest record longer than its fields");
		return {};
	}
	case Kind::ReferenceTimestamp: {
		const uint64_t timestamp = r.get<uint64_t>();
		const uint64_t duration = r.get<uint64_t>();
		GstStructure *reference = readStructure(r);
		if (!reference || !r.atEnd()) {
			if (reference)
				gst_structure_free(reference);
			return malformed(
				"a reference timestamp record whose reference is malformed");
		}
		GstCaps *caps = gst_caps_new_full(reference, nullptr);
		if (target)
			gst_buffer_add_reference_timestamp_meta(target, caps, timestamp, duration);
		gst_caps_unref(caps);
		return {};
	}
	case Kind::BufferFlags: {
		const uint32_t flags = r.get<uint32_t>();
		if (!r.atEnd())
			return malformed("a buffer flags record of the wrong size");
		// Flags a newer writer carries and this version does not know are left unset.
		if (target)
			GST_BUFFER_FLAG_SET(target, flags & kFrameFlags);
		return {};
	}
	}
	return {}; // a kind of a newer writer: skipped
}

// Both passes: the first (target null) checks every record, the second adds them.
Status readAll(std::span<const std::byte> bytes, GstBuffer *target)
{
	Reader r(bytes);
	if (r.get<uint8_t>() != kFormatVersion)
		return malformed("an unknown format version");
	while (!r.atEnd()) {
		const uint16_t kind = r.get<uint16_t>();
		const uint32_t size = r.get<uint32_t>();
		auto payload = r.getBytes(size);
		if (!r.ok())
			return malformed("a record longer than the bytes left");
		Reader record(payload);
		if (Status s = readRecord(Kind(kind), record, target); !s.ok())
			return s;
	}
	return {};
}

} // namespace

bool metaHasBytes(const GstMeta *meta) noexcept
{
	return meta && kindOf(meta) != 0;
}

size_t writeMetaBytes(GstBuffer *buffer, std::span<std::byte> out, unsigned &dropped)
{
	Writer header(out, 0);
	header.put<uint8_t>(kFormatVersion);
	if (!header.ok())
		return 0;
	size_t used = header.pos();
	// Only when it has some: most buffers of a progressive stream have none, and then a
	// buffer without metas writes nothing (no attachment message per frame).
	if (const guint flags = GST_BUFFER_FLAGS(buffer) & kFrameFlags) {
		Writer w(out, used);
		w.put<uint16_t>(uint16_t(Kind::BufferFlags));
		w.put<uint32_t>(sizeof(uint32_t));
		w.put<uint32_t>(flags);
		if (w.ok())
			used = w.pos();
	}
	gpointer state = nullptr;
	while (GstMeta *meta = gst_buffer_iterate_meta(buffer, &state)) {
		const uint16_t kind = kindOf(meta);
		if (!kind)
			continue;
		Writer w(out, used);
		w.put<uint16_t>(kind);
		w.put<uint32_t>(0); // the length, written below
		writePayload(w, Kind(kind), meta);
		if (!w.ok()) {
			dropped++;
			continue;
		}
		const uint32_t size = static_cast<uint32_t>(w.pos() - used - kRecordHeader);
		std::memcpy(out.data() + used + sizeof(uint16_t), &size, sizeof size);
		used = w.pos();
	}
	return used > 1 ? used : 0;
}

Status addMetasFromBytes(std::span<const std::byte> bytes, GstBuffer *buffer)
{
	if (!buffer || !gst_buffer_is_writable(buffer))
		return Error(ErrorCode::InvalidArgument, "buffer",
			     "Metas from another process: the buffer is not writable.");
	if (bytes.empty())
		return {};
	if (Status s = readAll(bytes, nullptr); !s.ok())
		return s;
	return readAll(bytes, buffer);
}

} // namespace gpuhandle::gst
