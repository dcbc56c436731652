// Private to the C API: the structs behind its opaque handles and the helpers at its boundary.
#pragma once

#include <gpuhandle/context.h>
#include <gpuhandle/error.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/gpuhandle.h>
#include <gpuhandle/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

struct gpuhandle_error {
	explicit gpuhandle_error(gpuhandle::Error e, bool isStatic = false) noexcept
		: value(std::move(e)), immortal(isStatic)
	{
	}
	std::atomic<int> refs{ 1 };
	gpuhandle::Error value;
	bool immortal; // a preallocated error (out of memory): ref and unref do nothing
};

struct gpuhandle_resource {
	explicit gpuhandle_resource(gpuhandle::Resource r) : value(std::move(r)) {}
	std::atomic<int> refs{ 1 };
	const gpuhandle::Resource value;
};

struct gpuhandle_frame {
	explicit gpuhandle_frame(gpuhandle::Frame f) : value(std::move(f)) {}
	~gpuhandle_frame();
	gpuhandle_frame(const gpuhandle_frame &) = delete;
	gpuhandle_frame &operator=(const gpuhandle_frame &) = delete;

	std::atomic<int> refs{ 1 };
	const gpuhandle::Frame value;
	// One reference each on the C objects of value's resources, for numResources entries, so
	// that gpuhandle_frame_get_resource() can return a borrowed pointer.
	std::array<gpuhandle_resource *, 4> resources{};
};

struct gpuhandle_context {
	explicit gpuhandle_context(std::shared_ptr<const gpuhandle::Context> c);
	std::atomic<int> refs{ 1 };
	const std::shared_ptr<const gpuhandle::Context> value;
	// C views of a Vulkan context's extension names (pointers into value's strings).
	std::vector<const char *> instanceExtensions;
	std::vector<const char *> deviceExtensions;
};

namespace gpuhandle::capi {

template<typename T>
T *ref(T *object) noexcept
{
	if (object)
		object->refs.fetch_add(1, std::memory_order_relaxed);
	return object;
}

template<typename T>
void unref(T *object) noexcept
{
	if (object && object->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
		delete object;
}

inline gpuhandle_status statusOf(ErrorCode code) noexcept
{
	return static_cast<gpuhandle_status>(code);
}

// Stores `e` in *error (when error is non-null) and returns its status.
gpuhandle_status fail(gpuhandle_error **error, Error e) noexcept;
// NullHandle: "<function>: <argument> is NULL."; builds the sentence only when error is non-null.
gpuhandle_status failNull(gpuhandle_error **error, const char *function, const char *argument);
// The preallocated out-of-memory and fatal errors, for when nothing more can be allocated.
gpuhandle_status failOutOfMemory(gpuhandle_error **error) noexcept;
gpuhandle_status failFatal(gpuhandle_error **error) noexcept;

// Runs `body` with no exception leaving: std::bad_alloc gives OUT_OF_MEMORY, anything else FATAL.
template<typename F>
gpuhandle_status guard(gpuhandle_error **error, F &&body) noexcept
{
	try {
		return body();
	} catch (const std::bad_alloc &) {
		return failOutOfMemory(error);
	} catch (...) {
		return failFatal(error);
	}
}

// The shape of a C call that makes a new C object from another: clears *out and *error, refuses
// a NULL `in` or `out` (NullHandle naming them), stores make(*in), and lets no exception leave.
template<typename In, typename Out, typename Make>
gpuhandle_status newFrom(const char *function, const In *in, const char *inName, Out **out,
			 gpuhandle_error **error, Make &&make) noexcept
{
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!in)
			return failNull(error, function, inName);
		if (!out)
			return failNull(error, function, "out");
		*out = make(*in);
		return GPUHANDLE_OK;
	});
}

// The C anchor as a KeepAliveRef (null when destroy is NULL). Runs destroy itself if the
// allocation fails, so that it runs exactly once whatever happens; call it before anything else
// that may throw. A `consumed` callback without `destroy` is refused (InvalidArgument).
Result<KeepAliveRef> anchorOf(const gpuhandle_anchor &anchor, const char *type);

inline std::optional<Uuid> uuidOf(bool has, const uint8_t (&bytes)[16])
{
	if (!has)
		return std::nullopt;
	Uuid uuid;
	std::memcpy(uuid.data(), bytes, uuid.size());
	return uuid;
}

inline void putUuid(const std::optional<Uuid> &uuid, bool &has, uint8_t (&bytes)[16])
{
	has = uuid.has_value();
	if (uuid)
		std::memcpy(bytes, uuid->data(), uuid->size());
}

inline std::optional<Luid> luidOf(bool has, const gpuhandle_luid &luid)
{
	return has ? std::optional<Luid>(Luid{ luid.low, luid.high }) : std::nullopt;
}

inline void putLuid(const std::optional<Luid> &luid, bool &has, gpuhandle_luid &out)
{
	has = luid.has_value();
	if (luid)
		out = { luid->low, luid->high };
}

template<typename T>
std::optional<T> optionalOf(bool has, T value)
{
	return has ? std::optional<T>(value) : std::nullopt;
}

template<typename T>
void putOptional(const std::optional<T> &value, bool &has, T &out)
{
	has = value.has_value();
	if (value)
		out = *value;
}

// A new C resource over `resource` (throws std::bad_alloc).
gpuhandle_resource *newResource(Resource resource);
// A new C frame over `frame`, taking a reference on each non-null `given` C resource (which must
// hold frame's resource of that index) and making new C resources for the others.
gpuhandle_frame *newFrame(Frame frame, const std::array<gpuhandle_resource *, 4> &given = {});

// Validates `desc` with `convert` (C desc -> Result<T::Desc>, taking fds and anchor first) and
// T::create(), then stores a new resource in *out.
template<typename T, typename CDesc, typename Convert>
gpuhandle_status createResource(const char *function, const CDesc *desc, gpuhandle_resource **out,
				gpuhandle_error **error, Convert convert) noexcept
{
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!desc)
			return failNull(error, function, "desc");
		Result<typename T::Desc> native = convert(*desc);
		if (!native)
			return fail(error, std::move(native).error());
		if (!out)
			return failNull(error, function, "out"); // native's fds and anchor go here
		Result<T> handle = T::create(std::move(*native));
		if (!handle)
			return fail(error, std::move(handle).error());
		*out = newResource(Resource(std::move(*handle)));
		return GPUHANDLE_OK;
	});
}

// Fills *out from the resource's T with `fill` (noexcept: plain copies), or zeroes it.
template<typename T, typename CDesc, typename Fill>
gpuhandle_status getResource(const gpuhandle_resource *resource, CDesc *out, Fill fill) noexcept
{
	static_assert(std::is_trivially_copyable_v<CDesc>);
	if (out)
		std::memset(static_cast<void *>(out), 0, sizeof(*out));
	if (!resource || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	const T *handle = resource->value.get<T>();
	if (!handle)
		return GPUHANDLE_ERROR_WRONG_KIND;
	fill(handle->desc(), *out);
	return GPUHANDLE_OK;
}

} // namespace gpuhandle::capi
