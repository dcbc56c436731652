// A gst-launch-1.0 description as the arguments a user types, one per space-separated token.
#pragma once

#include <string>
#include <vector>

namespace gpuhandle::test {

// "a ! b prop=1" -> {"a", "!", "b", "prop=1"}: gst-launch-1.0 joins its arguments with spaces
// again (escaping spaces inside one), so each token must be its own argument.
inline std::vector<std::string> launchWords(const std::string &description)
{
	std::vector<std::string> words;
	for (size_t at = 0, end; at < description.size(); at = end + 1) {
		end = description.find(' ', at);
		end = end == std::string::npos ? description.size() : end;
		if (end > at)
			words.push_back(description.substr(at, end - at));
	}
	return words;
}

} // namespace gpuhandle::test
