// Private to libgpuhandle-ffmpeg: a driver library opened at run time and its entry points.
#pragma once

#include <gpuhandle/error.h>

#include <dlfcn.h>
#include <optional>
#include <string>

namespace gpuhandle::ffmpeg::detail {

// dlopen()s `file` (never dlclose()d: drivers and ICD loaders keep threads and atexit handlers
// that outlive an unload) and resolves entry points with need(); failure() names what was
// missing: the library (with dlerror's reason) or its first missing symbol, as NotSupported on
// `field`, the library called `what` in the message ("The CUDA driver").
class RuntimeLibrary
{
public:
	RuntimeLibrary(const char *file, const char *what, const char *field)
		: file_(file), what_(what), field_(field),
		  library_(dlopen(file, RTLD_NOW | RTLD_LOCAL))
	{
		if (!library_) {
			const char *why = dlerror();
			failure_ = Error::format(ErrorCode::NotSupported, field_,
						 "%s (%s) could not be loaded: %s.", what_, file_,
						 why ? why : "unknown dlopen error");
		}
	}

	// Sets `out` to the symbol `name`; after the first failure it does nothing.
	template<typename F>
	void need(const char *name, F &out)
	{
		if (failure_)
			return;
		out = reinterpret_cast<F>(dlsym(library_, name));
		if (!out)
			failure_ = Error::format(ErrorCode::NotSupported, field_,
						 "%s (%s) lacks %s.", what_, file_, name);
	}

	const std::optional<Error> &failure() const noexcept { return failure_; }

private:
	const char *file_;
	const char *what_;
	const char *field_;
	void *library_;
	std::optional<Error> failure_{};
};

} // namespace gpuhandle::ffmpeg::detail
