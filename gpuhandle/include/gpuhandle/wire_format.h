// The wire format: a Frame (and the transport's control messages) as bytes plus fds, for sockets.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/frame_timing.h>
#include <gpuhandle/result.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace GPUHANDLE_API gpuhandle {

// Version 1 (types 11 and 12 added later, negotiated: see Timing below). Every message starts with
// a 16-byte header: magic "GHW1", version (u16), type (u16), total size in bytes including the
// header (u32), number of fds sent with it (u32). Fields are little-endian and packed; messages fit
// in kWireMaxMessage bytes, so a SOCK_SEQPACKET socket carries each in one datagram with its fds
// (SCM_RIGHTS). A receiver accepts a message only when every field checks out: known type, exact
// size, counts within bounds, every fd index naming one of the fds that came with it, each fd used
// once and of the kind its field needs; nothing is imported or mapped before that.
inline constexpr uint32_t kWireMagic = 0x31574847; // "GHW1"
inline constexpr uint16_t kWireVersion = 1;        // a header of another version is NotSupported
inline constexpr uint32_t kWireHeaderBytes = 16;   // bytes of the header every message starts with
inline constexpr uint32_t kWireMaxMessage = 4096;  // bytes of the largest message, header included
// 4 resources x 4 DMA-BUF objects + the acquire fence.
inline constexpr uint32_t kWireMaxFds = 17;
// Bytes of caps (or any producer description) a Hello may carry.
inline constexpr uint32_t kWireMaxCaps = 3072;
// Bytes an Attachment carries: a message less its header, the frame id and the length.
inline constexpr uint32_t kWireMaxAttachment = kWireMaxMessage - kWireHeaderBytes - 12;

// The header's type field: what a message carries and which way it goes.
enum class WireType : uint16_t {
	Hello = 1,   // producer -> consumer on connect: caps, the in-flight bound
	Frame = 2,   // producer -> consumer: a frame and its fds
	Release = 3, // consumer -> producer: done with frame `id` (its memory may be reused)
	Bye = 4,     // producer -> consumer: end of stream
	Caps = 5,    // producer -> consumer: new caps for the frames that follow
	// producer -> consumer: the application's bytes for frame `id`, sent just before it (a
	// receiver that does not know the type refuses it and still gets the frame)
	Attachment = 6,
	// consumer -> producer, once after the hello: how many files it keeps between frames
	// (a producer that does not know the type refuses it and sends every fd every time)
	Features = 7,
	// producer -> consumer (only one that sent Features): keep this file in cache slot N
	Remember = 8,
	// producer -> consumer: slot N's file is gone at the producer; let it go
	Forget = 9,
	// producer -> consumer: the stream ended (GStreamer's EOS) and the connection stays; frames
	// after it begin a next stream (a receiver that does not know the type refuses it and
	// waits for the next frame or Bye, as before)
	EndOfStream = 10,
	// producer -> consumer (only one that asked for timing in Features): a Frame with its
	// times (FrameTiming) between the id and the rest of the frame
	TimedFrame = 11,
	// producer -> consumer (only one that asked for timing): the timeline (StreamTiming) of
	// the frames that follow; sent after the consumer's Features and whenever it changes
	Timeline = 12,
};
// "hello", "frame", "timed frame", ...; "unknown" outside the enum. Static, never null.
GPUHANDLE_API const char *wireTypeName(WireType type) noexcept;

// The file cache (types 7-9). A producer's pool sends the same files frame after frame; passing
// each as an fd costs both processes an fd install, type and size checks and a close per frame.
// A producer that can says so in its Hello (kWireHelloFileCache); a consumer that announces N
// slots (Features) may then be sent each file once (Remember: slot, what
// the file is used as, the fd), checked then, and kept; a frame then names the file by slot: a
// shared-memory resource's fd index with kWireCachedFile set is slot (index & ~kWireCachedFile)
// of the receiver's cache, and its range is checked against the file as it was remembered.
// Remember empties its slot before it checks the new file, so a refused one leaves the slot
// empty and the frames naming it are refused, never shown with the file that was there before.
// Only shared-memory files (sealed memfds) are cached so far.
inline constexpr uint32_t kWireMaxCachedFiles = 32;
inline constexpr uint32_t kWireCachedFile = 0x80000000u; // fd index bit: the rest is a cache slot
// Hello's in-flight field: set when the producer keeps files for consumers that ask.
inline constexpr uint32_t kWireHelloFileCache = 0x80000000u;
// What a remembered file is used as (Remember's second field).
inline constexpr uint32_t kWireFileSharedMemory = 1;

// Timing (types 11 and 12). A producer that can send each frame's times says so in its Hello
// (kWireHelloTiming, bit 30 of the in-flight field: a receiver that does not know it masks only
// bit 31 and reads a large in-flight bound, which it never uses). Only then does a consumer send
// the longer Features (its second field: kWireFeatureTiming), which a producer that does not know
// it would refuse; the producer then sends it TimedFrame instead of Frame, and Timeline messages.
// So a producer and a consumer of different versions exchange plain frames, as before.
inline constexpr uint32_t kWireHelloTiming = 0x40000000u;
inline constexpr uint32_t kWireFeatureTiming = 1u; // Features flag: the consumer reads frame times
// The bytes of a TimedFrame's times (the FrameTiming fields, after the id).
inline constexpr uint32_t kWireTimingBytes = 48;
inline constexpr uint32_t kWireTimelineBytes = 88; // a Timeline's body (the StreamTiming fields)

// What a consumer announces in Features: the files it keeps (0 to kWireMaxCachedFiles in the
// longer form, 1 to kWireMaxCachedFiles in the first one) and whether it reads frame times.
struct WireFeatures {
	uint32_t cachedFiles = 0; // cache slots the consumer keeps (0: none)
	bool timing = false;      // the consumer reads frame times (TimedFrame, Timeline)
	// The longer form (cachedFiles, then flags); false: cachedFiles alone, as version 1 sent it
	bool extended = true;
};

// One encoded message. The fds are borrowed from the frame that was encoded (they stay open
// while it lives) and travel as SCM_RIGHTS with the bytes. Fixed size: encoding allocates
// nothing.
struct WireMessage {
	std::array<std::byte, kWireMaxMessage> bytes{}; // the header, then the body
	uint32_t size = 0;                              // bytes used, the header included
	std::array<int, kWireMaxFds> fds{};             // borrowed; fds[i] is the body's fd index i
	uint32_t numFds = 0;                            // fds used

	// The message's bytes: the first `size` of `bytes`.
	std::span<const std::byte> data() const noexcept { return { bytes.data(), size }; }
	// The fds to send with them (SCM_RIGHTS), still borrowed.
	std::span<const int> fdList() const noexcept { return { fds.data(), numFds }; }
};

// A frame crosses when its resources are fd-backed (DmaBuf, ShmFd, VulkanMemoryFd) and its
// acquire point is Noop or a fence fd (a sync_file or eventfd); anything else is NotSupported,
// naming the resource kind or sync kind that cannot cross. `wantsRelease` asks the consumer
// to send Release(id) once done (the producer reuses the memory after that).
GPUHANDLE_API Status encodeFrame(const Frame &frame, uint64_t id, bool wantsRelease,
				 WireMessage &out);
// The same, with resource i's file named by the receiver's cache slot `cachedSlots[i]` (< 0:
// sent as an fd). InvalidArgument when a slot is out of range or names a resource that is not
// shared memory.
GPUHANDLE_API Status encodeFrame(const Frame &frame, uint64_t id, bool wantsRelease,
				 std::span<const int32_t> cachedSlots, WireMessage &out);
// The same with the frame's times: a TimedFrame when `timing` is given (for a consumer that asked
// for them), else a Frame.
GPUHANDLE_API Status encodeFrame(const Frame &frame, uint64_t id, bool wantsRelease,
				 std::span<const int32_t> cachedSlots, const FrameTiming *timing,
				 WireMessage &out);
// InvalidArgument when cachedFiles is 0 or above kWireMaxCachedFiles (the first form).
GPUHANDLE_API Status encodeFeatures(uint32_t cachedFiles, WireMessage &out);
// Either form (features.extended); InvalidArgument when cachedFiles is out of the form's range.
GPUHANDLE_API Status encodeFeatures(const WireFeatures &features, WireMessage &out);
// InvalidArgument when a rate is 0 or not finite, or start is past stop.
GPUHANDLE_API Status encodeTimeline(const StreamTiming &timing, WireMessage &out);
// `fd` (borrowed, a sealed shared-memory file) for slot `slot`; InvalidArgument when the slot is
// out of range or the fd is negative.
GPUHANDLE_API Status encodeRemember(uint32_t slot, int fd, WireMessage &out);
// Slot `slot`'s file is gone at the producer; InvalidArgument when the slot is out of range.
GPUHANDLE_API Status encodeForget(uint32_t slot, WireMessage &out);
// InvalidArgument when caps are longer than kWireMaxCaps or maxInFlight is 0 (or has bit 30 or
// 31 set). `fileCache`: the producer keeps files for consumers (types 7 to 9): bit 31 of the
// in-flight field, which a receiver that does not know it never reads (it checks the bound is
// not 0), so only a consumer that sees it sends Features. `timing`: the producer sends frame
// times to consumers that ask (types 11 and 12, kWireHelloTiming).
GPUHANDLE_API Status encodeHello(std::string_view caps, uint32_t maxInFlight, WireMessage &out,
				 bool fileCache = false, bool timing = false);
// New caps for the frames that follow; InvalidArgument when longer than kWireMaxCaps.
GPUHANDLE_API Status encodeCaps(std::string_view caps, WireMessage &out);
// The consumer is done with frame `id` (the producer may reuse its memory). Cannot fail.
GPUHANDLE_API void encodeRelease(uint64_t id, WireMessage &out) noexcept;
// Bytes that travel with frame `id` (GStreamer metas, for gpuhandlesink): InvalidArgument when
// longer than kWireMaxAttachment. No fds.
GPUHANDLE_API Status encodeAttachment(uint64_t id, std::span<const std::byte> bytes,
				      WireMessage &out);
// The producer's last message: it goes away for good.
GPUHANDLE_API void encodeBye(WireMessage &out) noexcept;
// The stream ended (GStreamer's EOS); the connection stays, for a next stream's frames.
GPUHANDLE_API void encodeEndOfStream(WireMessage &out) noexcept;

// The header of a received message, checked (magic, version, known type, size equal to the
// bytes received, fd count equal to the fds received). InvalidArgument says which field.
GPUHANDLE_API Result<WireType> decodeHeader(std::span<const std::byte> bytes, uint32_t numFds);

// A received Frame or TimedFrame.
struct WireFrame {
	uint64_t id;                         // the producer's id of the frame, for Release(id)
	bool wantsRelease;                   // send Release(id) once done with the frame
	Frame frame;                         // no release gate: the transport attaches one
	uint32_t cachedResources = 0;        // resources named by cache slot, not sent as fds
	std::optional<FrameTiming> timing{}; // a TimedFrame's times
};
// Takes every fd in `fds` (each is closed unless the returned frame holds it: on error all
// are closed). Checks each fd's type (memory fds: memfd / shm / DMA-BUF / device memory; fence
// fds: sync_file or eventfd) and then builds the resources and the Frame with their own
// validation (plane geometry against the object sizes).
GPUHANDLE_API Result<WireFrame> decodeFrame(std::span<const std::byte> bytes,
					    std::span<UniqueFd> fds);
// The same for a receiver that announced a cache: `cachedFiles[slot]` holds what Remember left in
// each slot (a whole file, checked then); a resource naming an empty slot, or one past the span,
// is refused.
GPUHANDLE_API Result<WireFrame> decodeFrame(std::span<const std::byte> bytes,
					    std::span<UniqueFd> fds,
					    std::span<const std::optional<ShmFd>> cachedFiles);

// Features, either form: the slots the consumer keeps and whether it reads frame times (flags
// this version does not know are ignored, for later versions' features).
GPUHANDLE_API Result<WireFeatures> decodeFeatures(std::span<const std::byte> bytes);
// A Timeline's StreamTiming. Errors, as for every decoder of a message without fds: those of
// decodeHeader (with no fds), InvalidArgument for another type or a malformed body; here also
// InvalidArgument for a rate or a start that encodeTimeline refuses.
GPUHANDLE_API Result<StreamTiming> decodeTimeline(std::span<const std::byte> bytes);
// A received Remember: keep `file` in cache slot `slot` from now on.
struct WireRemember {
	// Below kWireMaxCachedFiles; the receiver checks it against the slots it announced.
	uint32_t slot;
	ShmFd file; // the whole file: sealed against shrinking, checked like a Frame's memfd
};
// Takes the one fd (closed on error). The slot is checked against kWireMaxCachedFiles; the
// receiver checks it against the slots it announced.
GPUHANDLE_API Result<WireRemember> decodeRemember(std::span<const std::byte> bytes,
						  std::span<UniqueFd> fds);
// A Forget's slot (InvalidArgument when out of range): the receiver empties that slot.
GPUHANDLE_API Result<uint32_t> decodeForget(std::span<const std::byte> bytes);

// A received Hello: the producer's caps and what it offers.
struct WireHello {
	std::string_view caps; // points into the bytes given
	// Frames the consumer may hold at once (at least 1), the flag bits masked off.
	uint32_t maxInFlight = 0;
	bool fileCache = false; // the producer names kept files (the in-flight field's bit 31)
	bool timing = false;    // the producer sends frame times (bit 30)
};
// Checked as every message without fds is (see decodeTimeline); InvalidArgument also for caps
// longer than kWireMaxCaps or an in-flight bound of 0.
GPUHANDLE_API Result<WireHello> decodeHello(std::span<const std::byte> bytes);
// A Caps message's caps, pointing into `bytes` (at most kWireMaxCaps of them).
GPUHANDLE_API Result<std::string_view> decodeCaps(std::span<const std::byte> bytes);
// A Release's frame id.
GPUHANDLE_API Result<uint64_t> decodeRelease(std::span<const std::byte> bytes);

// A received Attachment: the application's bytes for frame `id`.
struct WireAttachment {
	uint64_t id = 0;                  // the frame they travel with (it comes next)
	std::span<const std::byte> bytes; // points into the bytes given
};
// Checked as every message without fds is (see decodeTimeline); InvalidArgument also for
// bytes longer than kWireMaxAttachment.
GPUHANDLE_API Result<WireAttachment> decodeAttachment(std::span<const std::byte> bytes);

} // namespace gpuhandle
