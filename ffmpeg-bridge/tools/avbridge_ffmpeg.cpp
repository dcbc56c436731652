// gpuhandle-avbridge's FFmpeg log, which notices damage to the input.
#include "avbridge_ffmpeg.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>

extern "C" {
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
