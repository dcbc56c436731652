// A driver or loader library opened at run time and its entry points: the one dlopen() of the
// backends (CUDA, its EGL interop, the Vulkan loader) and of the FFmpeg bridge.
#pragma once

#include <gpuhandle/error.h>

#include <dlfcn.h>
#include <optional>

namespace gpuhandle {

// dlopen()s `file` and resolves entry points with need() (required) and optional(); failure()
// names what was missing: the library (with dlerror's reason) or its first missing symbol, as
// NotSupported on `field`, the library called `what` in the message ("The CUDA driver"),
// followed by `lacksHint` when a symbol is missing ("it is older than gpuhandle supports").
// The library is never dlclose()d here: drivers and ICD loaders keep threads and atexit
// handlers that outlive an unload. A user that must close it (a Vulkan loader opened per
// device) takes handle() and closes it once.
class RuntimeLibrary
{
public:
	RuntimeLibrary(const char *file, const char *what, const char *field,
		       const char *lacksHint = nullptr)
		: file_(file), what_(what), field_(field), lacksHint_(lacksHint),
		  library_(dlopen(file, RTLD_NOW | RTLD_LOCAL))
	{
		if (!library_) {
			const char *why = dlerror();
			failure_ = Error::format(ErrorCode::NotSupported, field_,
						 "%s (%s) could not be loaded: %s.", what_, file_,
						 why ? why : "unknown dlopen error");
		}
	}
	RuntimeLibrary(const RuntimeLibrary &) = delete;
	RuntimeLibrary &operator=(const RuntimeLibrary &) = delete;

	// Sets `out` to the symbol `name`; after the first failure it does nothing.
	template<typename F>
	void need(const char *name, F &out)
	{
		if (failure_)
			return;
		out = symbol<F>(name);
		if (out)
			return;
		failure_ = lacksHint_ ? Error::format(ErrorCode::NotSupported, field_,
						      "%s (%s) lacks %s; %s.", what_, file_, name,
						      lacksHint_)
				      : Error::format(ErrorCode::NotSupported, field_,
						      "%s (%s) lacks %s.", what_, file_, name);
	}

	// Sets `out` to the symbol `name`, or null where the library lacks it (an entry point that
	// only newer versions have); true when found.
	template<typename F>
	bool optional(const char *name, F &out) const
	{
		out = library_ ? symbol<F>(name) : nullptr;
		return out != nullptr;
	}

	const std::optional<Error> &failure() const noexcept { return failure_; }
	void *handle() const noexcept { return library_; }

private:
	template<typename F>
	F symbol(const char *name) const
	{
		// dlsym returns a generic pointer; this is its documented use.
		return reinterpret_cast<F>(dlsym(library_, name));
	}

	const char *file_;
	const char *what_;
	const char *field_;
	const char *lacksHint_;
	void *library_;
	std::optional<Error> failure_{};
};

} // namespace gpuhandle
