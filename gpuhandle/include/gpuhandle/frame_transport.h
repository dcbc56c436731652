// FrameSender and FrameReceiver: frames with their fences between processes over a Unix socket.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/frame_timing.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_waiter.h>
#include <gpuhandle/wire_format.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace GPUHANDLE_API gpuhandle {

// Who may connect to a sender (and which senders a receiver accepts): the peer's uid, read
// from the socket (SO_PEERCRED), must be this process's own uid or one listed. `anyUser`
// lifts the check (the socket file's mode still applies).
struct PeerRule {
	std::vector<uint32_t> allowUids{}; // uids accepted besides this process's own
	bool anyUser = false;              // true: any uid is accepted
};

// Called, from the transport's thread, for every message refused and every peer dropped (the
// error says which and why). Must not call back into the transport.
using TransportLog = std::function<void(const Error &)>;

// How a FrameSender listens and whom it serves; read by its create().
struct FrameSenderOptions {
	// Created; a socket file there is replaced only when nobody listens on it (a crashed
	// producer's); a live producer's is refused (InvalidState), and so is any other file.
	// At the end, only the socket file this sender made is removed.
	std::string socketPath;
	uint32_t socketMode = 0600; // owner-only unless widened
	// Which consumers may connect
	PeerRule peers{};
	uint32_t maxPeers = 8; // 1..64 consumers at once; more are refused
	// Frames a consumer may hold before it is skipped (1..1024)
	uint32_t maxInFlightPerPeer = 4;
	std::string caps{}; // sent to each consumer on connect (GStreamer caps, ...)
	// Greet consumers only once caps are known (here or by setCaps): one that connects sooner
	// waits in the socket's backlog for its hello, within its connectTimeout. gpuhandlesink
	// binds its socket when it starts, before any caps came.
	bool waitForCaps = false;
	TransportLog log{}; // may be empty: nothing is reported
	// Called when stats().peersWithRoom or peersConnected may have moved: a Release brought a
	// consumer below its in-flight bound, or one came or went. So a producer waiting for room
	// sleeps until then instead of polling stats(). Called from whichever thread saw it (the
	// transport's, or a send()/setCaps() caller's) with the transport's lock held: it must
	// not call into the transport (set a flag and notify; see gpuhandlesink).
	std::function<void()> roomChanged{};
};

// A FrameSender's counters since create(), as its stats() returns them.
struct FrameSenderStats {
	uint64_t framesSent = 0;    // frame messages sent (one per consumer that got the frame)
	uint64_t framesSkipped = 0; // a consumer was at its in-flight bound (or its socket full)
	uint64_t releases = 0;      // Release messages accepted
	// Consumers let in and greeted
	uint64_t peersAccepted = 0;
	uint64_t peersRefused = 0; // credentials or maxPeers
	uint64_t peersLost = 0;    // disconnected or crashed; their frames were released
	uint64_t badMessages = 0;  // refused messages from consumers
	// Files sent once for a consumer to keep (wire_format.h's file cache)
	uint64_t filesRemembered = 0;
	// Frame messages (of framesSent) that named one such file instead of sending its fd again
	uint64_t framesOverKeptFiles = 0;
	// Consumers connected now
	uint32_t peersConnected = 0;
	uint32_t peersWithRoom = 0; // connected consumers below their in-flight bound
};

// The producer side: listens on a socket path, greets each consumer with the caps, sends each
// frame to every consumer that has room, and signals a frame's release gate once every consumer
// that got it sent Release (or went away). A consumer's crash costs only its frames. The gate is
// signalled on the thread that learnt of the release (the internal one, or send()'s caller when no
// consumer took the frame), with no lock of the sender's held: a gate's ReleaseListener may work.
// Thread safety: send/setCaps/stats from any thread; one internal thread serves the socket.
class FrameSender
{
public:
	// Checks the options, listens on socketPath and starts the internal thread; never null on
	// success. OutOfRange or InvalidArgument for an option outside its bounds (caps longer than
	// kWireMaxCaps, a socket path not of 1 to 107 bytes), InvalidState when a live producer
	// holds the path, Io when a system call fails.
	static Result<std::unique_ptr<FrameSender>> create(FrameSenderOptions options);
	// Says Bye to every consumer, closes the sockets and removes the socket file. Frames still
	// held by consumers are released.
	~FrameSender();
	FrameSender(const FrameSender &) = delete;
	FrameSender &operator=(const FrameSender &) = delete;

	// Sends `frame` (fd-backed resources, Noop or fence-fd acquire: see encodeFrame) to every
	// connected consumer with room; returns how many got it. A frame with a release gate gets
	// it signalled when they are done (at once when none got it). `attachment`: bytes of the
	// application's that travel with the frame (gpuhandlesink: the buffer's metas), at most
	// kWireMaxAttachment (InvalidArgument, nothing sent).
	Result<uint32_t> send(const Frame &frame, std::span<const std::byte> attachment = {});
	// The same with the frame's times (frame_timing.h), which reach the consumers that read
	// them (FrameReceiver::timing); the others get the frame as send() above sends it.
	Result<uint32_t> send(const Frame &frame, const FrameTiming &timing,
			      std::span<const std::byte> attachment = {});
	// Caps for the frames that follow (sent to every consumer now, and to later ones on
	// connect).
	Status setCaps(std::string caps);
	// The timeline of the frames that follow (GStreamer's segment and the producer's latency):
	// sent now to every consumer that reads times, and to later ones once they connect.
	// InvalidArgument when it is not valid (encodeTimeline); the same timeline again sends
	// nothing.
	Status setStreamTiming(const StreamTiming &timing);
	// Ends the stream (GStreamer's EOS) for every connected consumer, after the frames already
	// sent: their receive() answers end of stream once, and the connection stays for the
	// frames of a next stream. Returns how many consumers were told; one whose queue stays
	// full for a second is dropped (its frames released), as for caps.
	Result<uint32_t> endStream();
	// A snapshot of the counters, taken under the sender's lock. Any thread.
	FrameSenderStats stats() const;
	// Waits up to `timeout` for at least `count` consumers (Timeout when fewer came).
	Status waitForPeers(uint32_t count, WaitDuration timeout);

	// The implementation: internal to the library, named here only for its own sources.
	struct GPUHANDLE_LOCAL Impl;

private:
	GPUHANDLE_LOCAL explicit FrameSender(std::unique_ptr<Impl> impl);
	std::unique_ptr<Impl> impl_;
};

// Where a FrameReceiver connects and what it accepts; read by its connect().
struct FrameReceiverOptions {
	std::string socketPath; // the sender's socket file (1 to 107 bytes)
	// How long connect() retries while nobody listens there yet (a sender starting), and then
	// how long it waits for the sender's hello
	WaitDuration connectTimeout = std::chrono::seconds(5);
	PeerRule peers{}; // who the sender may be
	// May be empty: nothing is reported
	TransportLog log{};
	// Shared-memory files the receiver keeps open between frames, so that a producer's pool
	// sends each file once and then names it (0..kWireMaxCachedFiles; 0: every fd every time).
	// A file is held until the producer lets it go, or replaces it, or the receiver goes.
	uint32_t cachedFiles = kWireMaxCachedFiles;
	// Ask a producer that can for each frame's times and their timeline (timing(),
	// streamTiming()); false: frames only, as from an earlier version.
	bool timing = true;
	// connect() gives up (Cancelled) once this reads true (checked every 10 to 50 ms): a
	// GStreamer source's unlock. Borrowed: must outlive connect().
	const std::atomic<bool> *cancel = nullptr;
};

// A FrameReceiver's counters since connect(), as its stats() returns them.
struct FrameReceiverStats {
	uint64_t framesReceived = 0;      // frame messages accepted
	uint64_t attachmentsReceived = 0; // frames that came with an attachment
	uint64_t releasesSent = 0;        // Release messages the sender took
	uint64_t streamsEnded = 0;        // end-of-stream messages received
	uint64_t timedFrames = 0;         // frames that came with their times
	uint64_t badMessages = 0;         // refused messages from the sender (logged, skipped)
	uint64_t filesRemembered = 0;     // files the sender gave this receiver to keep
	uint64_t framesOverKeptFiles = 0; // frames naming one of them instead of an fd
	uint32_t filesHeld = 0;           // of those files, the ones it keeps now
};

// The consumer side: connects, reads the caps, and returns frames one by one. Each frame that
// the sender wants back carries a release gate: signal it (ReleaseGate::signal, with the fence of
// any GPU work still reading) and the sender hears of it once that fence is done (without a
// fence, from inside signal(): the release is sent on the signalling thread).
// Thread safety: receive from one thread at a time; frames and their gates from any thread.
class FrameReceiver
{
public:
	// Connects to socketPath within connectTimeout, checks the sender's uid (InvalidState) and
	// reads its hello (the caps and the in-flight bound). Errors: OutOfRange for cachedFiles,
	// InvalidArgument for a bad path or hello, Timeout, Cancelled, Io (the sender hung up: it
	// may have refused this consumer). Never null on success.
	static Result<std::unique_ptr<FrameReceiver>> connect(FrameReceiverOptions options);
	~FrameReceiver();
	FrameReceiver(const FrameReceiver &) = delete;
	FrameReceiver &operator=(const FrameReceiver &) = delete;

	// The caps of the frames now arriving (updated by receive when the sender changes them).
	std::string caps() const;
	// How many caps messages have come since connect(): a caller that remembers the count
	// calls caps() (a string copy) only when it moved.
	uint64_t capsMessages() const noexcept;
	// The next frame; nullopt at the end of a stream: the sender ended it (endStream; the call
	// after waits for the frames of a next stream) or said Bye (every later call answers the
	// same). Timeout when no frame came within `timeout`; Io when the sender went away without
	// Bye (crashed). Messages that fail validation are logged, counted and skipped.
	Result<std::optional<Frame>> receive(WaitDuration timeout);
	// The attachment of the frame the last receive() returned (empty when it came without
	// one); valid until the next receive().
	std::span<const std::byte> attachment() const noexcept;
	// The times of the frame the last receive() returned: nullopt when it came without (a
	// producer of an earlier version, one that sent none, or timing off in the options).
	std::optional<FrameTiming> timing() const noexcept;
	// Frames handed out whose release gate is not signalled yet, and how many the producer
	// lets this consumer hold (its hello's bound): a consumer that keeps frames (an encoder's
	// queue) reaches the bound and the producer skips it; at bound - 1 a consumer should copy
	// (gpuhandlesrc does, as v4l2src does when its pool runs low).
	uint32_t framesHeld() const noexcept;
	uint32_t maxInFlight() const noexcept; // the sender's maxInFlightPerPeer
	// Whether the producer said Bye: it went away for good (an end of stream receive() answered
	// is the producer's EOS when this is false).
	bool saidBye() const noexcept;
	// Whether the producer sends times to this receiver (it offered them, and the options
	// asked): when false, timing() stays empty for the whole connection.
	bool producerSendsTiming() const noexcept;
	// The producer's latest timeline (nullopt until one came), and how many have come (a
	// caller that remembers the count reads the timeline only when it moved). Any thread.
	std::optional<StreamTiming> streamTiming() const;
	uint64_t streamTimingMessages() const noexcept; // timelines received since connect()
	// A snapshot of the counters (each read atomically, not all at one instant). Any thread.
	FrameReceiverStats stats() const;

	// The implementation: internal to the library, named here only for its own sources.
	struct GPUHANDLE_LOCAL Impl;

private:
	GPUHANDLE_LOCAL explicit FrameReceiver(std::shared_ptr<Impl> impl);
	std::shared_ptr<Impl> impl_;
};

} // namespace gpuhandle
