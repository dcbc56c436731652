// What every gpuhandle program answers alike: --version, and an unknown option named.
#pragma once

#include "gpuhandle_i18n.h"
#include "gpuhandle_version.h" // GPUHANDLE_VERSION, from meson's project version

#include <cstdio>
#include <cstring>

namespace gpuhandle::program {

inline bool isVersion(const char *arg) noexcept
{
	return !std::strcmp(arg, "--version") || !std::strcmp(arg, "-V");
}

inline bool isHelp(const char *arg) noexcept
{
	return !std::strcmp(arg, "--help") || !std::strcmp(arg, "-h");
}

// "gpuhandle-info (gpuhandle) 0.1.0", as GNU programs print it; exit status 0.
inline int printVersion(const char *program) noexcept
{
	std::printf("%s (gpuhandle) %s\n", program, GPUHANDLE_VERSION);
	return 0;
}

// The bad option, named on stderr before the usage text (as getopt's programs do).
inline void reportUnknownOption(const char *program, const char *arg) noexcept
{
	std::fprintf(stderr, _("%s: unknown option '%s'\n"), program, arg);
}

} // namespace gpuhandle::program
