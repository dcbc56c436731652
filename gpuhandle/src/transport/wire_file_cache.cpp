// The wire format's file cache messages: Features (also naming frame times), Remember and Forget.
#include "wire_checks.h"

#include <sys/stat.h>

namespace gpuhandle {

namespace {

using detail::malformed;
using detail::WireReader;
using detail::WireWriter;

Error slotOutOfRange(const char *field, uint32_t slot)
{
	return Error::format(ErrorCode::InvalidArgument, field,
			     "Frame transport: cache slot %u (a consumer keeps at most %u files).",
			     slot, kWireMaxCachedFiles);
}

} // namespace

Status encodeFeatures(uint32_t cachedFiles, WireMessage &out)
{
	return encodeFeatures(WireFeatures{ cachedFiles, false, false }, out);
}

Status encodeFeatures(const WireFeatures &features, WireMessage &out)
{
	// The first form names at least one file (a consumer without a cache sent nothing).
	const uint32_t least = features.extended ? 0 : 1;
	if (features.cachedFiles < least || features.cachedFiles > kWireMaxCachedFiles)
		return Error::format(ErrorCode::InvalidArgument, "cachedFiles",
				     "Frame transport: %u cached files (%u to %u).",
				     features.cachedFiles, least, kWireMaxCachedFiles);
	if (features.timing && !features.extended)
		return Error(ErrorCode::InvalidArgument, "timing",
			     "Frame transport: frame times are asked for in the longer "
			     "features message only.");
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint32_t>(features.cachedFiles);
	if (features.extended)
		w.put<uint32_t>(features.timing ? kWireFeatureTiming : 0);
	w.finish(WireType::Features);
	return {};
}

Status encodeRemember(uint32_t slot, int fd, WireMessage &out)
{
	if (slot >= kWireMaxCachedFiles)
		return slotOutOfRange("slot", slot);
	if (fd < 0)
		return Error(ErrorCode::BadFd, "fd", "Frame transport: no file to remember.");
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint32_t>(slot);
	w.put<uint32_t>(kWireFileSharedMemory);
	uint32_t index = 0;
	w.addFd(fd, index);
	w.put<uint32_t>(index);
	w.finish(WireType::Remember);
	return {};
}

Status encodeForget(uint32_t slot, WireMessage &out)
{
	if (slot >= kWireMaxCachedFiles)
		return slotOutOfRange("slot", slot);
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint32_t>(slot);
	w.finish(WireType::Forget);
	return {};
}

Result<WireFeatures> decodeFeatures(std::span<const std::byte> bytes)
{
	if (auto e = detail::expectType(bytes, WireType::Features, 0))
		return std::move(*e);
	WireReader r(bytes);
	WireFeatures features;
	features.cachedFiles = r.get<uint32_t>();
	features.extended = !r.atEnd();
	// Flags of later versions are not this version's to refuse: only timing is read.
	if (features.extended)
		features.timing = (r.get<uint32_t>() & kWireFeatureTiming) != 0;
	if (!r.atEnd())
		return malformed("size", "the features message's length is wrong");
	const uint32_t least = features.extended ? 0 : 1;
	if (features.cachedFiles < least || features.cachedFiles > kWireMaxCachedFiles)
		return Error::format(ErrorCode::InvalidArgument, "cachedFiles",
				     "Frame transport: a consumer announced %u cached files (%u to "
				     "%u).",
				     features.cachedFiles, least, kWireMaxCachedFiles);
	return features;
}

namespace {

Result<WireRemember> decodeRememberFds(std::span<const std::byte> bytes, std::span<UniqueFd> fds)
{
	if (auto e = detail::expectType(bytes, WireType::Remember,
					static_cast<uint32_t>(fds.size())))
		return std::move(*e);
	WireReader r(bytes);
	const uint32_t slot = r.get<uint32_t>();
	const uint32_t use = r.get<uint32_t>();
	const uint32_t index = r.get<uint32_t>();
	if (!r.atEnd())
		return malformed("size", "the remember message's length is wrong");
	if (slot >= kWireMaxCachedFiles)
		return slotOutOfRange("slot", slot);
	if (use != kWireFileSharedMemory)
		return Error::format(ErrorCode::InvalidArgument, "use",
				     "Frame transport: a file to remember as %u; only shared "
				     "memory (%u) is cached.",
				     use, kWireFileSharedMemory);
	if (fds.size() != 1)
		return Error::format(
			ErrorCode::InvalidArgument, "numFds",
			"Frame transport: a remember message with %zu fds (1 expected).",
			fds.size());
	detail::FdTable table(fds);
	const detail::Field field{ "fd" };
	auto fd = table.takeIndex(index, detail::FdUse::SharedMemory, field);
	if (!fd.ok())
		return std::move(fd).error();
	// The whole file, as it is now: sealed against shrinking, it stays at least this long.
	struct stat st {};
	if (fstat(fd->get(), &st) != 0 || st.st_size <= 0)
		return Error(ErrorCode::BadFd, "fd",
			     "Frame transport: the file to remember is empty or cannot be "
			     "inspected.");
	auto file =
		detail::receivedShm(std::move(*fd), 0, static_cast<uint64_t>(st.st_size), field);
	if (!file.ok())
		return std::move(file).error();
	return WireRemember{ slot, std::move(*file) };
}

} // namespace

Result<WireRemember> decodeRemember(std::span<const std::byte> bytes, std::span<UniqueFd> fds)
{
	auto remember = decodeRememberFds(bytes, fds);
	if (!remember.ok()) {
		for (UniqueFd &fd : fds)
			fd.reset();
	}
	return remember;
}

Result<uint32_t> decodeForget(std::span<const std::byte> bytes)
{
	if (auto e = detail::expectType(bytes, WireType::Forget, 0))
		return std::move(*e);
	WireReader r(bytes);
	const uint32_t slot = r.get<uint32_t>();
	if (!r.atEnd())
		return malformed("size", "the forget message's length is wrong");
	if (slot >= kWireMaxCachedFiles)
		return slotOutOfRange("slot", slot);
	return slot;
}

} // namespace gpuhandle
