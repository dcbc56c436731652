// ShmMemoryCache: one kept-mapped GstFdMemory per shared-memory file a producer sends again, and
// a share of it per frame (see gstgpuhandleshmcache.hpp).
#include "gstgpuhandleconvertinternal.h"
#include "gstgpuhandlefdkeeper.h"

#include <algorithm>
#include <array>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>
#include <gst/gpuhandle/gstgpuhandleshmcache.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_convert_debug

namespace gpuhandle::gst {

namespace {

struct FileId {
	dev_t dev = 0;
	ino_t ino = 0;
	bool operator==(const FileId &) const = default;
};

// Whether two fds are the same open file description: 1 yes, 0 no, -1 kcmp is not allowed here
// (a kernel without CONFIG_CHECKPOINT_RESTORE, a seccomp filter).
int sameOpenFile(pid_t self, int a, int b)
{
	const long order = syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
	return order < 0 ? -1 : order == 0 ? 1 : 0;
}

} // namespace

struct GPUHANDLE_LOCAL ShmMemoryCache::Impl {
	struct Entry {
		FileId id{};
		GstMemory *parent = nullptr; // newSharedParent's; this cache's reference
		uint64_t lastUse = 0;
		// The fd the file came in first when it is owned, held open: while it is, a frame
		// whose fd has its number is over this very file (FrameReceiver's file cache hands
		// out the same fd again), known without a system call. A borrowed one is not kept:
		// its anchor (someone's frame or buffer) would live as long as this entry.
		SharedFd source{};
	};

	explicit Impl(uint32_t capacity)
		: entries(std::max<uint32_t>(capacity, 1)), seen(4 * entries.size())
	{
	}
	~Impl() { clear(); }

	void clear() noexcept
	{
		for (Entry &e : entries)
			drop(e);
		for (FileId &id : seen)
			id = {};
	}
	static void drop(Entry &e) noexcept
	{
		if (e.parent)
			gst_memory_unref(e.parent); // its shares keep it until they go
		e = {};
	}
	// Whether `id` was seen before; remembers it either way.
	bool seenBefore(const FileId &id)
	{
		if (std::find(seen.begin(), seen.end(), id) != seen.end())
			return true;
		seen[nextSeen] = id;
		nextSeen = (nextSeen + 1) % seen.size();
		return false;
	}
	// The entry for the open file `fd` (of `id`): found, or made when it was seen before.
	Entry *entryFor(const SharedFd &source, const FileId &id, off_t fileSize)
	{
		const int fd = source.get();
		for (Entry &e : entries) {
			if (!e.parent || !(e.id == id))
				continue;
			const int same = sameOpenFile(self, fd, gst_fd_memory_get_fd(e.parent));
			if (same == 1)
				return &e;
			drop(e); // the inode number of another file now (or kcmp refused)
			if (same < 0)
				return disable();
		}
		if (!kcmpAllowed || !seenBefore(id) || fileSize <= 0)
			return nullptr;
		Entry &oldest = *std::min_element(entries.begin(), entries.end(),
						  [](const Entry &a, const Entry &b) {
							  return a.lastUse < b.lastUse;
						  });
		drop(oldest);
		const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (copy < 0)
			return nullptr;
		oldest.parent = detail::newSharedParent(copy, static_cast<gsize>(fileSize));
		if (!oldest.parent)
			return nullptr;
		oldest.id = id;
		if (source.isOwned())
			oldest.source = source;
		files++;
		return &oldest;
	}
	Entry *disable() noexcept
	{
		GST_INFO("kcmp(KCMP_FILE) is not allowed here: shared-memory files are not cached");
		kcmpAllowed = false;
		clear();
		return nullptr;
	}

	GstMemory *memoryFor(const SharedFd &fd, uint64_t offset, uint64_t size,
			     const std::shared_ptr<const Frame> &keep)
	{
		Entry *e = nullptr;
		for (Entry &cached : entries)
			if (cached.parent && cached.source.get() == fd.get()) {
				e = &cached;
				break;
			}
		struct stat st {};
		if (!e && (!kcmpAllowed || fstat(fd.get(), &st) != 0))
			return nullptr;
		if (!e)
			e = entryFor(fd, { st.st_dev, st.st_ino }, st.st_size);
		if (!e)
			return nullptr;
		if (offset > e->parent->maxsize || size > e->parent->maxsize - offset) {
			drop(*e); // the file grew since: mapped again when it comes back
			return nullptr;
		}
		GstMemory *share = gst_memory_share(e->parent, static_cast<gssize>(offset),
						    static_cast<gssize>(size));
		if (!share)
			return nullptr;
		if (!detail::holdUntilSharesGo(e->parent, keep)) {
			gst_memory_unref(share);
			return nullptr;
		}
		e->lastUse = ++uses;
		hits++;
		return share;
	}

	std::vector<Entry> entries;
	std::vector<FileId> seen; // the last files seen once (4 x capacity), not cached yet
	size_t nextSeen = 0;
	uint64_t uses = 0;
	uint64_t hits = 0;
	uint64_t files = 0;
	bool kcmpAllowed = true;
	const pid_t self = getpid();
};

ShmMemoryCache::ShmMemoryCache(uint32_t capacity) : impl_(std::make_unique<Impl>(capacity))
{
	detail::initConvert();
}

ShmMemoryCache::~ShmMemoryCache() = default;

void ShmMemoryCache::clear() noexcept
{
	impl_->clear();
}

uint64_t ShmMemoryCache::hits() const noexcept
{
	return impl_->hits;
}

uint64_t ShmMemoryCache::filesCached() const noexcept
{
	return impl_->files;
}

GstMemory *ShmMemoryCache::memoryFrom(void *impl, const SharedFd &fd, uint64_t offset,
				      uint64_t size, const std::shared_ptr<const Frame> &keep)
{
	return static_cast<Impl *>(impl)->memoryFor(fd, offset, size, keep);
}

Result<GstBuffer *> fdBufferFromFrame(const Frame &frame, ShmMemoryCache &cache)
{
	return detail::fdBufferFromFrameWith(frame, true, ShmMemoryCache::memoryFrom,
					     cache.impl_.get());
}

Result<GstBuffer *> defaultLayoutBufferFromFrame(const Frame &frame, ShmMemoryCache &cache,
						 const GstVideoInfo &info)
{
	bool laidOut = false;
	Result<GstBuffer *> buffer = detail::fdBufferFromFrameWith(
		frame, true, ShmMemoryCache::memoryFrom, cache.impl_.get(), &info, &laidOut);
	if (!buffer || laidOut)
		return buffer;
	return toDefaultLayout(*buffer, info);
}

} // namespace gpuhandle::gst
