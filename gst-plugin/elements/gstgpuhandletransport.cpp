// What gpuhandlesink and gpuhandlesrc share: the allowed-uids property, the monotonic clock.
#include "gstgpuhandletransport.h"

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <sstream>

namespace gpuhandle::gst {

Result<PeerRule> parseAllowedUids(const std::string &text)
{
	PeerRule rule;
	std::stringstream list(text);
	std::string entry;
	while (std::getline(list, entry, ',')) {
		const size_t first = entry.find_first_not_of(" \t");
		if (first == std::string::npos) {
			if (list.eof() && rule.allowUids.empty() &&
			    text.find(',') == std::string::npos)
				break; // all blank: no extra users
			return Error::format(ErrorCode::InvalidArgument, "allowed-uids",
					     "\"%s\" has an empty entry.", text.c_str());
		}
		const size_t last = entry.find_last_not_of(" \t");
		const std::string uid = entry.substr(first, last - first + 1);
		char *end = nullptr;
		errno = 0;
		const unsigned long value = std::strtoul(uid.c_str(), &end, 10);
		if (errno || !end || *end || uid[0] == '-' ||
		    value > std::numeric_limits<uint32_t>::max())
			return Error::format(ErrorCode::InvalidArgument, "allowed-uids",
					     "\"%s\" in \"%s\" is not a user id.", uid.c_str(),
					     text.c_str());
		rule.allowUids.push_back(static_cast<uint32_t>(value));
	}
	return rule;
}

GParamSpec *allowedUidsParamSpec(const char *blurb)
{
	return g_param_spec_string("allowed-uids", "Allowed uids", blurb, "",
				   static_cast<GParamFlags>(G_PARAM_READWRITE |
							    G_PARAM_STATIC_STRINGS |
							    GST_PARAM_MUTABLE_READY));
}

bool isMonotonicClock(GstClock *clock)
{
	if (!clock || G_OBJECT_TYPE(clock) != GST_TYPE_SYSTEM_CLOCK)
		return false;
	GstClockType type = GST_CLOCK_TYPE_REALTIME;
	g_object_get(clock, "clock-type", &type, nullptr);
	return type == GST_CLOCK_TYPE_MONOTONIC;
}

GstClockTime monotonicNow()
{
	timespec now{};
	clock_gettime(CLOCK_MONOTONIC, &now);
	return GST_TIMESPEC_TO_TIME(now);
}

GstClockTimeDiff monotonicOffset(GstClock *clock, bool monotonic)
{
	if (monotonic || !clock)
		return 0;
	return GST_CLOCK_DIFF(gst_clock_get_time(clock), monotonicNow());
}

} // namespace gpuhandle::gst
