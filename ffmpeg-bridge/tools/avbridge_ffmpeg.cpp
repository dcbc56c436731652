// gpuhandle-avbridge's FFmpeg helpers: error text, hardware devices, a log that notices damage.
#include "avbridge_ffmpeg.h"

#include "gpuhandle_i18n.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
}

namespace gpuhandle::avbridge {

namespace {

std::atomic<const void *> watched{ nullptr };
std::mutex damageMutex;
std::string damage;

// Demuxers report a file cut short or corrupt only in their log (the matroska demuxer's "File
// ended prematurely" is a warning, and av_read_frame then says EOF): such lines are damage.
bool isDamage(int level, const std::string &line)
{
	if (level <= AV_LOG_ERROR)
		return true;
	for (const char *word : { "prematurely", "truncat", "Truncat", "incomplete", "corrupt" })
		if (line.find(word) != std::string::npos)
			return true;
	return false;
}

void logCallback(void *avcl, int level, const char *fmt, va_list args)
{
	if (avcl && avcl == watched.load() && level <= AV_LOG_WARNING) {
		va_list copy;
		va_copy(copy, args);
		char line[1024];
		std::vsnprintf(line, sizeof line, fmt, copy);
		va_end(copy);
		std::string text = line;
		while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
			text.pop_back();
		if (isDamage(level, text)) {
			std::lock_guard<std::mutex> lock(damageMutex);
			if (damage.empty())
				damage = text;
		}
	}
	av_log_default_callback(avcl, level, fmt, args);
}

} // namespace

std::string avErrorText(int code)
{
	char text[AV_ERROR_MAX_STRING_SIZE] = {};
	if (av_strerror(code, text, sizeof text) < 0)
		std::snprintf(text, sizeof text, _("error %d"), code);
	return text;
}

Error avError(const std::string &what, int code)
{
	return Error(ErrorCode::Backend, "ffmpeg", what + ": " + avErrorText(code));
}

AvBufferOwner::~AvBufferOwner()
{
	av_buffer_unref(&ref);
}

Result<AVBufferRef *> createHwDevice(const std::string &spec)
{
	const size_t colon = spec.find(':');
	const std::string typeName = spec.substr(0, colon);
	const std::string device = colon == std::string::npos ? "" : spec.substr(colon + 1);
	const AVHWDeviceType type = av_hwdevice_find_type_by_name(typeName.c_str());
	if (type == AV_HWDEVICE_TYPE_NONE) {
		std::string known;
		for (AVHWDeviceType t = av_hwdevice_iterate_types(AV_HWDEVICE_TYPE_NONE);
		     t != AV_HWDEVICE_TYPE_NONE; t = av_hwdevice_iterate_types(t))
			known += (known.empty() ? "" : ", ") +
				 std::string(av_hwdevice_get_type_name(t));
		return Error(ErrorCode::InvalidArgument, "device",
			     i18n::format(_("unknown device type '%s' (this FFmpeg knows: %s)"),
					  typeName.c_str(),
					  known.empty() ? _("none") : known.c_str()));
	}
	AVBufferRef *ref = nullptr;
	const int err = av_hwdevice_ctx_create(
		&ref, type, device.empty() ? nullptr : device.c_str(), nullptr, 0);
	if (err < 0)
		return avError(device.empty() ? i18n::format(_("could not create a %s device"),
							     typeName.c_str())
					      : i18n::format(_("could not create a %s device '%s'"),
							     typeName.c_str(), device.c_str()),
			       err);
	return ref;
}

void installLog(bool verbose)
{
	av_log_set_level(verbose ? AV_LOG_INFO : AV_LOG_ERROR);
	av_log_set_callback(logCallback);
}

void watchDemuxer(const void *demuxer)
{
	watched.store(demuxer);
}

std::string demuxerDamage()
{
	std::lock_guard<std::mutex> lock(damageMutex);
	return damage;
}

} // namespace gpuhandle::avbridge
