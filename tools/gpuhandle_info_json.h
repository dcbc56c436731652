// gpuhandle-info's JSON text: strings escaped as RFC 8259 says.
#pragma once

#include <cstdio>
#include <string>

namespace gpuhandle::info {

inline std::string jsonString(const std::string &text)
{
	std::string out = "\"";
	for (char c : text) {
		switch (c) {
		case '"': out += "\\\""; break;
		case '\\': out += "\\\\"; break;
		case '\n': out += "\\n"; break;
		case '\t': out += "\\t"; break;
		default:
			if (static_cast<unsigned char>(c) < 0x20) {
				char escaped[8];
				std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
				out += escaped;
			} else {
				out += c;
			}
		}
	}
	return out + "\"";
}

} // namespace gpuhandle::info
