// gpuhandle-frame-handoff: NV12 frames over CPU planes and a memfd, read on another thread.
#include <gpuhandle/colorimetry.h>
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/resource.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <optional>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <utility>

using namespace gpuhandle;

namespace {

constexpr uint32_t kWidth = 1280;
constexpr uint32_t kHeight = 720;
constexpr uint64_t kLumaBytes = uint64_t(kWidth) * kHeight;
constexpr uint64_t kFrameBytes = kLumaBytes * 3 / 2; // Y plane, then interleaved UV at half height
constexpr int kCopies = 3;                           // copies of each frame handed to the consumer

std::atomic<int> g_anchorsReleased{ 0 };
std::thread::id g_consumerThread;

int openFdCount()
{
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	int count = 0;
	while (struct dirent *entry = readdir(dir))
		count += entry->d_name[0] != '.';
	closedir(dir);
	return count - 1; // the directory's own fd
}

// A different byte pattern per frame, so that a mixed-up plane shows in the checksum.
uint8_t patternByte(uint64_t i, uint64_t seed)
{
	return static_cast<uint8_t>(((i + seed) * 2654435761u) >> 13);
}

// Rows of plane `index` of the NV12 layout: full height for Y, half for UV.
uint32_t planeRows(uint32_t index)
{
	return index == 0 ? kHeight : kHeight / 2;
}

// FNV-1a over the visible bytes of one plane (kWidth bytes of each row, skipping stride padding).
uint64_t checksumPlane(uint64_t hash, const uint8_t *base, uint32_t stride, uint32_t rows)
{
	for (uint32_t y = 0; y < rows; ++y) {
		for (uint32_t x = 0; x < kWidth; ++x)
			hash = (hash ^ base[uint64_t(y) * stride + x]) * 0x100000001b3ULL;
	}
	return hash;
}

constexpr uint64_t kFnvSeed = 0xcbf29ce484222325ULL;

// Producer-owned pixel memory; the frame borrows it and this anchor frees it with the last copy.
class PixelMemory : public KeepAlive
{
public:
	PixelMemory() : bytes_(std::make_unique<uint8_t[]>(kFrameBytes)) {}
	~PixelMemory() override
	{
		++g_anchorsReleased;
		std::printf(
			"  anchor released: %llu bytes of pixel memory freed on the %s thread\n",
			static_cast<unsigned long long>(kFrameBytes),
			std::this_thread::get_id() == g_consumerThread ? "consumer" : "producer");
	}
	uint8_t *data() const { return bytes_.get(); }

private:
	std::unique_ptr<uint8_t[]> bytes_;
};

// Reads every plane of `frame` wherever it lives and returns its checksum; nullopt if unreadable.
std::optional<uint64_t> consumeFrame(const Frame &frame)
{
	uint64_t hash = kFnvSeed;
	for (uint32_t i = 0; i < frame.numPlanes(); ++i) {
		const PlaneView &view = frame.plane(i);
		const Resource &resource = frame.resource(view.resource);
		if (const CpuPlanes *planes = resource.get<CpuPlanes>()) {
			const CpuPlane &plane = planes->desc().planes[view.subresource];
			const uint8_t *base =
				static_cast<const uint8_t *>(plane.data) + view.offset;
			hash = checksumPlane(hash, base, view.stride, planeRows(i));
		} else if (const ShmFd *shm = resource.get<ShmFd>()) {
			// The consumer maps the memfd read-only; sealed, it cannot shrink.
			size_t length = shm->desc().offset + shm->desc().size;
			void *map = mmap(nullptr, length, PROT_READ, MAP_SHARED,
					 shm->desc().fd.get(), 0);
			if (map == MAP_FAILED) {
				std::perror("mmap");
				return std::nullopt;
			}
			const uint8_t *base =
				static_cast<const uint8_t *>(map) + shm->desc().offset;
			hash = checksumPlane(hash, base + view.offset, view.stride, planeRows(i));
			munmap(map, length);
		} else {
			std::fprintf(stderr, "plane %u: unexpected resource kind %s\n", i,
				     resourceKindName(resource.kind()));
			return std::nullopt;
		}
	}
	return hash;
}

struct Handoff {
	Frame frame;
	uint64_t expected;
};

// A small blocking queue; nullopt tells the consumer to stop.
class HandoffQueue
{
public:
	void push(std::optional<Handoff> item)
	{
		{
			std::lock_guard<std::mutex> lock(mutex_);
			items_.push_back(std::move(item));
		}
		ready_.notify_one();
	}
	std::optional<Handoff> pop()
	{
		std::unique_lock<std::mutex> lock(mutex_);
		ready_.wait(lock, [this] { return !items_.empty(); });
		std::optional<Handoff> item = std::move(items_.front());
		items_.pop_front();
		return item;
	}

private:
	std::mutex mutex_;
	std::condition_variable ready_;
	std::deque<std::optional<Handoff>> items_;
};

void printFrame(const Frame &frame)
{
	std::printf("  %ux%u %s, %u resource(s), %u planes\n", frame.width(), frame.height(),
		    pixelFormatName(frame.format()), frame.numResources(), frame.numPlanes());
	for (uint32_t i = 0; i < frame.numPlanes(); ++i) {
		const PlaneView &view = frame.plane(i);
		std::printf(
			"  plane %u: resource %u (%s), subresource %u, offset %llu, stride %u\n", i,
			view.resource, resourceKindName(frame.resource(view.resource).kind()),
			view.subresource, static_cast<unsigned long long>(view.offset),
			view.stride);
	}
}

const Colorimetry kBt709Limited{ ColorRange::Limited, ColorMatrix::Bt709, ColorPrimaries::Bt709,
				 ColorTransfer::Bt709 };

// Frame 1: two CpuPlanes planes over memory the PixelMemory anchor owns.
std::optional<Frame> makeCpuFrame(uint64_t *expected)
{
	auto memory = std::make_shared<PixelMemory>();
	for (uint64_t i = 0; i < kFrameBytes; ++i)
		memory->data()[i] = patternByte(i, 1);
	*expected = checksumPlane(checksumPlane(kFnvSeed, memory->data(), kWidth, kHeight),
				  memory->data() + kLumaBytes, kWidth, kHeight / 2);

	CpuPlanesDesc desc;
	desc.numPlanes = 2;
	desc.planes[0] = { memory->data(), kWidth, kHeight };
	desc.planes[1] = { memory->data() + kLumaBytes, kWidth, kHeight / 2 };
	desc.anchor = std::move(memory);
	Result<CpuPlanes> planes = CpuPlanes::create(std::move(desc));
	if (!planes.ok()) {
		std::fprintf(stderr, "CpuPlanes::create: %s\n", planes.error().message().c_str());
		return std::nullopt;
	}
	Result<Frame> frame = Frame::wrap(PixelFormat::NV12, kWidth, kHeight, kBt709Limited,
					  Resource(std::move(planes).value()));
	if (!frame.ok()) {
		std::fprintf(stderr, "Frame::wrap: %s\n", frame.error().message().c_str());
		return std::nullopt;
	}
	return std::move(frame).value();
}

// Frame 2: one sealed memfd holding both planes, at offsets 0 and width * height.
std::optional<Frame> makeMemfdFrame(uint64_t *expected)
{
	UniqueFd fd(memfd_create("gpuhandle-frame", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (!fd.isValid() || ftruncate(fd.get(), static_cast<off_t>(kFrameBytes)) != 0) {
		std::perror("memfd");
		return std::nullopt;
	}
	void *map = mmap(nullptr, kFrameBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
	if (map == MAP_FAILED) {
		std::perror("mmap");
		return std::nullopt;
	}
	uint8_t *bytes = static_cast<uint8_t *>(map);
	for (uint64_t i = 0; i < kFrameBytes; ++i)
		bytes[i] = patternByte(i, 2);
	*expected = checksumPlane(checksumPlane(kFnvSeed, bytes, kWidth, kHeight),
				  bytes + kLumaBytes, kWidth, kHeight / 2);
	munmap(map, kFrameBytes);
	// Written once, then frozen: consumers may map it without fear of SIGBUS or later writes.
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
	if (fcntl(fd.get(), F_ADD_SEALS, seals) != 0) {
		std::perror("F_ADD_SEALS");
		return std::nullopt;
	}

	Result<ShmFd> shm = ShmFd::create({ SharedFd(std::move(fd)), 0, kFrameBytes, 0 });
	if (!shm.ok()) {
		std::fprintf(stderr, "ShmFd::create: %s\n", shm.error().message().c_str());
		return std::nullopt;
	}
	std::printf("  memfd %d: %llu bytes, sealed against shrinking: %s\n",
		    shm.value().desc().fd.get(), static_cast<unsigned long long>(kFrameBytes),
		    shm.value().isSealed() ? "yes" : "no");

	FrameDesc desc;
	desc.format = PixelFormat::NV12;
	desc.width = kWidth;
	desc.height = kHeight;
	desc.colorimetry = kBt709Limited;
	desc.numResources = 1;
	desc.resources[0] = std::move(shm).value();
	desc.numPlanes = 2;
	desc.planes[0] = { 0, 0, 0, kWidth };
	desc.planes[1] = { 0, 0, kLumaBytes, kWidth };
	Result<Frame> frame = Frame::create(std::move(desc));
	if (!frame.ok()) {
		std::fprintf(stderr, "Frame::create: %s\n", frame.error().message().c_str());
		return std::nullopt;
	}
	return std::move(frame).value();
}

} // namespace

int main()
{
	const int fdsBefore = openFdCount();
	std::printf("gpuhandle-frame-handoff: %ux%u NV12 frames, %d copies each to a consumer "
		    "thread\nopen fds before: %d\n\n",
		    kWidth, kHeight, kCopies, fdsBefore);

	HandoffQueue queue;
	std::atomic<int> verified{ 0 };
	std::atomic<int> mismatched{ 0 };
	std::thread consumer([&] {
		while (std::optional<Handoff> item = queue.pop()) {
			std::optional<uint64_t> sum = consumeFrame(item->frame);
			if (sum && *sum == item->expected)
				++verified;
			else
				++mismatched;
		}
	});
	g_consumerThread = consumer.get_id();

	int handed = 0;
	for (int which = 0; which < 2; ++which) {
		static const char *const kTitles[] = {
			"frame 1: CPU planes owned through a KeepAlive anchor",
			"frame 2: a sealed memfd wrapped as a ShmFd",
		};
		std::printf("%s\n", kTitles[which]);
		uint64_t expected = 0;
		std::optional<Frame> frame = which == 0 ? makeCpuFrame(&expected)
							: makeMemfdFrame(&expected);
		if (!frame) {
			queue.push(std::nullopt);
			consumer.join();
			return 1;
		}
		printFrame(*frame);
		std::printf("  checksum 0x%016llx; handing over %d copies\n",
			    static_cast<unsigned long long>(expected), kCopies);
		for (int c = 0; c < kCopies; ++c, ++handed)
			queue.push(Handoff{ *frame, expected });
		// The producer's reference goes here; the consumer's copies keep the memory.
		std::printf("\n");
	}
	queue.push(std::nullopt);
	consumer.join();

	const int fdsAfter = openFdCount();
	std::printf("copies handed over: %d\nchecksums verified: %d of %d\n"
		    "anchors released: %d of 1\nopen fds after: %d (before: %d)\n",
		    handed, verified.load(), handed, g_anchorsReleased.load(), fdsAfter, fdsBefore);
	const bool ok = verified == handed && mismatched == 0 && g_anchorsReleased == 1 &&
			fdsAfter == fdsBefore;
	std::printf("%s\n", ok ? "OK: every copy read back intact; nothing leaked" : "FAILED");
	return ok ? 0 : 1;
}
